/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sketch.h: the whole public API of libsketch.
 * Link with -lsketch (pkg-config: sketch; CMake: find_package(sketch)).
 */
#ifndef SKETCH_H
#define SKETCH_H

#include "sketch/core.h"
#include "sketch/hll.h"
#include "sketch/hll_extra.h"
#include "sketch/hll_map.h"
#include "sketch/bloom.h"
#include "sketch/bloom_extra.h"
#include "sketch/cms.h"
#include "sketch/topk.h"
#include "sketch/frequent.h"
#include "sketch/cuckoo.h"
#include "sketch/tdigest.h"
#include "sketch/tdigest_extra.h"
#include "sketch/sbchain.h"
#include "sketch/window_hll.h"
#include "sketch/redisbloom.h"
#include "sketch/aging_bloom.h"

#endif
