/* SPDX-License-Identifier: BSD-3-Clause */
/* rm_api.c: the module API's function pointers, bound at load time. */
#include "rm_api.h"

#define RM_DEFINE(ret, name, params) ret(*RM_##name) params;
RM_API_FUNCTIONS(RM_DEFINE)
RM_API_OPTIONAL(RM_DEFINE)
#undef RM_DEFINE

typedef int (*get_api_fn)(const char *name, void *out);

int rm_bind(RedisModuleCtx *ctx)
{
    /* The context's first field is the server's GetApi. */
    get_api_fn get_api = *(get_api_fn *)(void *)ctx;
#define RM_BIND(ret, name, params)                                                          \
    if (get_api("RedisModule_" #name, (void *)&RM_##name) != RM_OK || RM_##name == NULL)    \
        return RM_ERR;
    RM_API_FUNCTIONS(RM_BIND)
#undef RM_BIND
#define RM_BIND_OPTIONAL(ret, name, params)                                                 \
    if (get_api("RedisModule_" #name, (void *)&RM_##name) != RM_OK)                        \
        RM_##name = NULL;
    RM_API_OPTIONAL(RM_BIND_OPTIONAL)
#undef RM_BIND_OPTIONAL
    return RM_OK;
}
