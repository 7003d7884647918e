// SPDX-License-Identifier: BSD-3-Clause
// node-redis 5.9.0 (npm `redis`) against the Redis module sketch.so, unchanged,
// in RESP3 and in RESP2 (client option RESP: 3 or 2; node-redis 5's default is 2).
//
// The server is started by ../test_module_node.py (conftest.py's `servers`),
// which passes its port in SKETCH_NODE_PORT (host: SKETCH_NODE_HOST, default
// 127.0.0.1). Every expected value is what node-redis 5.9.0 gives for
// RedisBloom's replies: its bloom helpers (node_modules/@redis/bloom) turn
// RESP2's 1/0 into booleans (transformBooleanReply: `reply === 1`) and leave
// RESP3's replies as they are; BF.INFO keeps the server's field names (an
// object from RESP3's map, and transformInfoV2Reply's object from RESP2's flat
// array). Errors inside an array reply are ErrorReply (SimpleError) elements,
// not rejections.
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { createClient, ErrorReply, RESP_TYPES } from 'redis';

const HOST = process.env.SKETCH_NODE_HOST || '127.0.0.1';
const PORT = Number(process.env.SKETCH_NODE_PORT);
if (!Number.isInteger(PORT) || PORT <= 0) {
  throw new Error('SKETCH_NODE_PORT must be the port of a redis-server with sketch.so loaded '
                  + '(run tests/module/test_module_node.py)');
}

const FULL = 'ERR non scaling filter is full';
const WRONGTYPE = 'WRONGTYPE Operation against a key holding the wrong kind of value';
const HLL_FIELDS = ['Precision', 'Registers', 'Encoding', 'Count', 'Standard error', 'Memory'];
const COMPARE_FIELDS = ['precision', ...['union', 'intersection', 'a_only', 'b_only', 'jaccard',
  'a_in_b'].flatMap((part) => [part, `${part}_error`, `${part}_lower`, `${part}_upper`])];

// Buffers for bulk strings (BF.SCANDUMP's binary chunks), node-redis 5's way:
// a per-command type mapping (commandOptions() of node-redis 4 is gone).
const BINARY = { [RESP_TYPES.BLOB_STRING]: Buffer };

function assertReplyError(value, message) {
  assert.ok(value instanceof ErrorReply,
            `expected an ErrorReply "${message}", got ${typeof value} ${String(value)}`);
  assert.equal(value.message, message);
}

const rejectsWith = (message) => (e) => {
  assert.ok(e instanceof ErrorReply, `expected an ErrorReply, got ${e?.constructor?.name}: ${e}`);
  assert.equal(e.message, message);
  return true;
};

// node-redis 5 builds RESP3 maps as objects of null prototype, which
// deepStrictEqual tells apart from a literal: compare their own fields.
function plain(reply) {
  return Array.isArray(reply) || reply === null || typeof reply !== 'object' ? reply : { ...reply };
}

function items(prefix, n) {
  return Array.from({ length: n }, (_, i) => `${prefix}:${i}`);
}

for (const RESP of [3, 2]) {
  describe(`RESP${RESP}`, () => {
    /** @type {import('redis').RedisClientType} */
    let client;

    before(async () => {
      const options = {
        socket: { host: HOST, port: PORT, connectTimeout: 10000, reconnectStrategy: false },
      };
      options.RESP = RESP;   // said even for 2, node-redis 5's default, so each run is what it names
      client = createClient(options);
      client.on('error', () => {});        // a failed command rejects its own promise
      await client.connect();
    });

    after(async () => {
      if (client?.isOpen) await client.close();
    });

    beforeEach(async () => {
      await client.flushAll();
    });

    test('the connection speaks the protocol under test', async () => {
      const info = await client.sendCommand(['CLIENT', 'INFO']);
      assert.match(String(info), new RegExp(`\\bresp=${RESP}\\b`));
    });

    test('BF.ADD and BF.EXISTS: booleans from bf.*, raw true/false (RESP3) or 1/0 (RESP2)', async () => {
      assert.equal(await client.bf.add('k', 'a'), true);
      assert.equal(await client.bf.add('k', 'a'), false);
      assert.equal(await client.bf.exists('k', 'a'), true);
      assert.equal(await client.bf.exists('k', 'zz'), false);
      assert.equal(await client.bf.exists('missing', 'a'), false);

      const yes = RESP === 3 ? true : 1;
      const no = RESP === 3 ? false : 0;
      assert.equal(await client.sendCommand(['BF.ADD', 'k', 'b']), yes);
      assert.equal(await client.sendCommand(['BF.ADD', 'k', 'b']), no);
      assert.equal(await client.sendCommand(['BF.EXISTS', 'k', 'b']), yes);
      assert.equal(await client.sendCommand(['BF.EXISTS', 'k', 'zz']), no);
    });

    test('BF.MADD, BF.MEXISTS, BF.INSERT: arrays of booleans', async () => {
      assert.deepEqual(await client.bf.mAdd('k', ['a', 'b', 'a']), [true, true, false]);
      assert.deepEqual(await client.bf.mExists('k', ['a', 'zz', 'b']), [true, false, true]);
      assert.deepEqual(await client.bf.insert('k', ['c', 'a']), [true, false]);
      assert.deepEqual(await client.bf.insert('new', ['x', 'y'], { CAPACITY: 1000, ERROR: 0.001 }),
                       [true, true]);
      assert.deepEqual(await client.bf.mExists('new', ['x', 'y', 'z']), [true, true, false]);

      const yes = RESP === 3 ? true : 1;
      const no = RESP === 3 ? false : 0;
      assert.deepEqual(await client.sendCommand(['BF.MADD', 'k', 'd', 'a']), [yes, no]);
      assert.deepEqual(await client.sendCommand(['BF.MEXISTS', 'k', 'd', 'zz']), [yes, no]);
      assert.deepEqual(await client.sendCommand(['BF.INSERT', 'k', 'ITEMS', 'e', 'e']), [yes, no]);
    });

    test('BF.RESERVE, BF.INFO (an object of the five fields), BF.CARD (a number)', async () => {
      assert.equal(await client.bf.reserve('k', 0.01, 1000), 'OK');
      assert.deepEqual(await client.bf.mAdd('k', ['a', 'b', 'c']), [true, true, true]);
      const info = await client.bf.info('k');
      // The names RedisBloom sends: node-redis 5.9.0 does not rename them.
      assert.deepEqual(Object.keys(info),
                       ['Capacity', 'Size', 'Number of filters', 'Number of items inserted',
                        'Expansion rate']);
      assert.equal(info.Capacity, 1000);
      assert.equal(typeof info.Size, 'number');
      assert.ok(info.Size > 0, `Size ${info.Size}`);
      assert.equal(info['Number of filters'], 1);
      assert.equal(info['Number of items inserted'], 3);
      assert.equal(info['Expansion rate'], 2);
      assert.equal(await client.bf.card('k'), 3);
      assert.equal(await client.bf.card('missing'), 0);

      assert.equal(await client.bf.reserve('x4', 0.01, 10, { EXPANSION: 4 }), 'OK');
      assert.equal((await client.bf.info('x4'))['Expansion rate'], 4);
    });

    test('BF.INFO of a NONSCALING filter: Expansion rate null', async () => {
      assert.equal(await client.bf.reserve('nf', 0.01, 2, { NONSCALING: true }), 'OK');
      assert.deepEqual({ ...(await client.bf.info('nf')), Size: 0 },
                       { Capacity: 2, Size: 0, 'Number of filters': 1,
                         'Number of items inserted': 0, 'Expansion rate': null });
    });

    test('BF.INFO of one field: a map of one (RESP3), an array of its value (RESP2)', async () => {
      await client.bf.reserve('k', 0.01, 500);
      assert.deepEqual(plain(await client.sendCommand(['BF.INFO', 'k', 'CAPACITY'])),
                       RESP === 3 ? { Capacity: 500 } : [500]);
      await client.bf.reserve('nf', 0.01, 2, { NONSCALING: true });
      assert.deepEqual(plain(await client.sendCommand(['BF.INFO', 'nf', 'EXPANSION'])),
                       RESP === 3 ? { 'Expansion rate': null } : [null]);
    });

    test('BF.MADD on a full NONSCALING filter: trimmed after the error (3 elements)', async () => {
      assert.equal(await client.sendCommand(['BF.RESERVE', 'nf', '0.01', '2', 'NONSCALING']), 'OK');
      const reply = await client.bf.mAdd('nf', ['a', 'b', 'c', 'd']);
      assert.ok(Array.isArray(reply));
      assert.equal(reply.length, 3, `the 4th item must not be tried: ${reply}`);
      assert.deepEqual(reply.slice(0, 2), [true, true]);
      if (RESP === 3) {
        // no transform in RESP3: the server's error element itself
        assertReplyError(reply[2], FULL);
      } else {
        // RESP2: @redis/bloom maps every element with `reply === 1`, so the
        // error element becomes false (node-redis's behaviour, not the module's)
        assert.equal(reply[2], false);
      }
      // What the server sent, seen without the bloom transform:
      const raw = await client.sendCommand(['BF.MADD', 'nf', 'a', 'x', 'y']);
      assert.equal(raw.length, 2, `the 3rd item must not be tried: ${raw}`);
      assert.equal(raw[0], RESP === 3 ? false : 0);
      assertReplyError(raw[1], FULL);
      assert.equal(await client.bf.card('nf'), 2);
      assert.deepEqual(await client.bf.mExists('nf', ['a', 'b']), [true, true]);
    });

    test('BF.INSERT on a full NONSCALING filter: trimmed after the error (3 elements)', async () => {
      const reply = await client.bf.insert('nf', ['a', 'b', 'c', 'd'],
                                           { CAPACITY: 2, ERROR: 0.01, NONSCALING: true });
      assert.ok(Array.isArray(reply));
      assert.equal(reply.length, 3, `the 4th item must not be tried: ${reply}`);
      assert.deepEqual(reply.slice(0, 2), [true, true]);
      if (RESP === 3) assertReplyError(reply[2], FULL);
      else assert.equal(reply[2], false);
      assert.equal((await client.bf.info('nf'))['Expansion rate'], null);

      const raw = await client.sendCommand(['BF.INSERT', 'nf', 'ITEMS', 'b', 'x', 'y']);
      assert.equal(raw.length, 2, `the 3rd item must not be tried: ${raw}`);
      assert.equal(raw[0], RESP === 3 ? false : 0);
      assertReplyError(raw[1], FULL);
      assert.equal(await client.bf.card('nf'), 2);
    });

    test('BF.SCANDUMP / BF.LOADCHUNK: 1000 items round trip, chunks as Buffers', async () => {
      const its = items('item', 1000);
      const added = await client.bf.mAdd('src', its);   // the module's defaults: it scales
      assert.equal(added.length, 1000);
      assert.ok(added.every((x) => typeof x === 'boolean'));
      const srcInfo = await client.bf.info('src');
      assert.ok(srcInfo['Number of filters'] > 1, `layers ${srcInfo['Number of filters']}`);

      const bin = client.withTypeMapping(BINARY);
      const chunks = [];
      let iterator = 0;
      for (;;) {
        const piece = await bin.bf.scanDump('src', iterator);
        assert.deepEqual(Object.keys(piece), ['iterator', 'chunk']);
        assert.equal(typeof piece.iterator, 'number');
        assert.ok(Buffer.isBuffer(piece.chunk), `chunk is ${typeof piece.chunk}`);
        if (piece.iterator === 0) {
          assert.equal(piece.chunk.length, 0);
          break;
        }
        assert.ok(piece.chunk.length > 0);
        chunks.push(piece);
        iterator = piece.iterator;
        assert.ok(chunks.length < 10000, 'BF.SCANDUMP never ends');
      }
      assert.ok(chunks.length >= 2, `pieces: ${chunks.length}`);
      // binary data that a UTF-8 string would not carry intact
      assert.ok(chunks.some(({ chunk }) => !chunk.equals(Buffer.from(chunk.toString(), 'utf8'))));

      for (const { iterator: it, chunk } of chunks) {
        assert.equal(await client.bf.loadChunk('dst', it, chunk), 'OK');
      }
      assert.deepEqual(await client.bf.mExists('dst', its), new Array(1000).fill(true));
      assert.deepEqual(await client.bf.info('dst'), srcInfo);
      assert.equal(await client.bf.card('dst'), await client.bf.card('src'));
      const [dump0, dump1] = await Promise.all([
        bin.sendCommand(['BF.SCANDUMP', 'src', '0']), bin.sendCommand(['BF.SCANDUMP', 'dst', '0'])]);
      assert.deepEqual(dump1, dump0);
    });

    test('HLL.ADD (integer 1/0), HLL.COUNT (integer)', async () => {
      assert.equal(await client.sendCommand(['HLL.ADD', 'h', 'a', 'b', 'c']), 1);
      assert.equal(await client.sendCommand(['HLL.ADD', 'h', 'a', 'b']), 0);
      assert.equal(await client.sendCommand(['HLL.COUNT', 'h']), 3);
      assert.equal(await client.sendCommand(['HLL.COUNT', 'missing']), 0);
    });

    test('HLL.INFO: a map (an object) in RESP3, a flat array in RESP2', async () => {
      await client.sendCommand(['HLL.ADD', 'h', 'a', 'b']);
      const reply = await client.sendCommand(['HLL.INFO', 'h']);
      let fields;
      if (RESP === 3) {
        assert.ok(reply !== null && typeof reply === 'object' && !Array.isArray(reply),
                  `HLL.INFO in RESP3 must be a map (a JS object), got ${JSON.stringify(reply)}`);
        fields = reply;
        assert.deepEqual(Object.keys(fields), HLL_FIELDS);
        assert.equal(typeof fields['Standard error'], 'number');
      } else {
        assert.ok(Array.isArray(reply));
        assert.equal(reply.length, 12);
        assert.deepEqual(reply.filter((_, i) => i % 2 === 0), HLL_FIELDS);
        fields = Object.fromEntries(HLL_FIELDS.map((name, i) => [name, reply[2 * i + 1]]));
        assert.equal(typeof fields['Standard error'], 'string');  // a double as a bulk string
      }
      assert.equal(fields.Precision, 14);
      assert.equal(fields.Registers, 16384);
      assert.equal(fields.Encoding, 'sparse');
      assert.equal(fields.Count, 2);
      const stderr = Number(fields['Standard error']);
      assert.ok(stderr > 0 && stderr < 1, `Standard error ${fields['Standard error']}`);
      assert.equal(typeof fields.Memory, 'number');
      assert.ok(fields.Memory > 0);
    });

    test('HLL.ESTIMATE: an array whose second element is a double', async () => {
      await client.sendCommand(['HLL.ADD', 'h', ...items('e', 100)]);
      const reply = await client.sendCommand(['HLL.ESTIMATE', 'h']);
      assert.ok(Array.isArray(reply));
      assert.equal(reply.length, 8);
      assert.equal(reply[0], await client.sendCommand(['HLL.COUNT', 'h']));
      if (RESP === 3) assert.equal(typeof reply[1], 'number');
      else assert.equal(typeof reply[1], 'string');
      const rel = Number(reply[1]);
      assert.ok(Number.isFinite(rel) && rel > 0 && rel < 1, `relative error ${reply[1]}`);
      for (const bound of reply.slice(2)) assert.ok(Number.isInteger(bound), `bound ${bound}`);
      for (let k = 2; k < 8; k += 2) assert.ok(reply[k] <= reply[0] && reply[0] <= reply[k + 1]);
    });

    test('HLL.COMPARE: a map (an object) in RESP3, a flat array of 50 in RESP2', async () => {
      await client.sendCommand(['HLL.ADD', 'a', ...items('c', 2000)]);
      await client.sendCommand(['PFADD', 'b', ...items('c', 1000)]);
      const reply = await client.sendCommand(['HLL.COMPARE', 'a', 'b']);
      let fields;
      if (RESP === 3) {
        assert.ok(reply !== null && typeof reply === 'object' && !Array.isArray(reply),
                  `HLL.COMPARE in RESP3 must be a map (a JS object), got ${JSON.stringify(reply)}`);
        fields = reply;
        assert.equal(typeof fields.jaccard, 'number');
      } else {
        assert.ok(Array.isArray(reply));
        assert.equal(reply.length, 50);
        fields = Object.fromEntries(reply.flatMap((x, i) => (i % 2 ? [] : [[x, reply[i + 1]]])));
        assert.equal(typeof fields.jaccard, 'string');  // a double as a bulk string
      }
      assert.deepEqual(Object.keys(fields), COMPARE_FIELDS);
      assert.equal(fields.precision, 14);
      for (const part of ['union', 'intersection', 'a_only', 'b_only']) {
        for (const name of [part, `${part}_lower`, `${part}_upper`]) {
          assert.ok(Number.isInteger(fields[name]), `${name} ${fields[name]}`);
        }
        assert.ok(fields[`${part}_lower`] <= fields[part] && fields[part] <= fields[`${part}_upper`]);
      }
      // B is inside A: half of A is in B, and B has nothing of its own
      const share = Number(fields.a_in_b);
      assert.ok(Math.abs(share - 0.5) <= 3 * Number(fields.a_in_b_error), `a_in_b ${share}`);
      assert.equal(fields.b_only_lower, 0);
    });

    test('errors: WRONGTYPE on a string key, "ERR not found" for BF.INFO of a missing key', async () => {
      assert.equal(await client.set('s', 'x'), 'OK');
      await assert.rejects(client.bf.add('s', 'a'), rejectsWith(WRONGTYPE));
      await assert.rejects(client.bf.mAdd('s', ['a']), rejectsWith(WRONGTYPE));
      await assert.rejects(client.bf.exists('s', 'a'), rejectsWith(WRONGTYPE));
      await assert.rejects(client.sendCommand(['BF.ADD', 's', 'a']), rejectsWith(WRONGTYPE));
      await assert.rejects(client.bf.info('missing'), rejectsWith('ERR not found'));
      await assert.rejects(client.sendCommand(['BF.INFO', 'missing']), rejectsWith('ERR not found'));
      // the connection is still usable after the errors
      assert.equal(await client.bf.add('k', 'a'), true);
      assert.equal((await client.bf.info('k'))['Number of items inserted'], 1);
    });

    test('CMS.*: counts as numbers, CMS.INFO an object (map in RESP3, flat array in RESP2)', async () => {
      assert.equal(await client.cms.initByDim('a', 1000, 5), 'OK');
      assert.equal(await client.cms.initByProb('b', 0.001, 0.01), 'OK');
      assert.deepEqual(await client.cms.incrBy('a', [{ item: 'x', incrementBy: 3 },
                                                     { item: 'y', incrementBy: 1 },
                                                     { item: 'x', incrementBy: 2 }]), [3, 1, 5]);
      assert.deepEqual(await client.cms.query('a', ['x', 'y', 'z']), [5, 1, 0]);
      assert.deepEqual({ ...(await client.cms.info('b')) }, { width: 2000, depth: 7, count: 0 });
      assert.equal(await client.cms.initByDim('m', 1000, 5), 'OK');
      assert.equal(await client.cms.merge('m', [{ name: 'a', weight: 2 }, { name: 'a', weight: 3 }]), 'OK');
      assert.deepEqual(await client.cms.query('m', ['x', 'y']), [25, 5]);
      assert.equal((await client.cms.info('m')).count, 30);
      await assert.rejects(client.cms.merge('m', ['b']), rejectsWith('CMS: width/depth is not equal'));
      await assert.rejects(client.cms.query('missing', ['x']), rejectsWith('CMS: key does not exist'));
    });

    test('TOPK.*: expelled items or null, booleans from QUERY, LIST with counts', async () => {
      assert.equal(await client.topK.reserve('t', 2, { width: 1000, depth: 5, decay: 0.9 }), 'OK');
      assert.deepEqual(await client.topK.add('t', ['a', 'a', 'b']), [null, null, null]);
      assert.deepEqual(await client.topK.add('t', ['c', 'c', 'c']), ['b', null, null]);
      assert.deepEqual(await client.topK.query('t', ['a', 'b', 'c']), [true, false, true]);
      assert.deepEqual(await client.topK.count('t', ['a', 'c']), [2, 3]);
      assert.deepEqual(await client.topK.list('t'), ['c', 'a']);
      assert.deepEqual(await client.topK.listWithCount('t'), [{ item: 'c', count: 3 }, { item: 'a', count: 2 }]);
      const info = await client.topK.info('t');
      assert.equal(info.k, 2);
      assert.equal(info.width, 1000);
      assert.equal(Number(info.decay), 0.9);
      await assert.rejects(client.topK.list('missing'), rejectsWith('TopK: key does not exist'));
    });

    test('CF.*: booleans from adds (integers from INSERTNX in RESP3), exists and deletes, counts as numbers, CF.INFO an object', async () => {
      assert.equal(await client.cf.reserve('f', 1000, { BUCKETSIZE: 4, EXPANSION: 2 }), 'OK');
      assert.equal(await client.cf.add('f', 'a'), true);
      assert.equal(await client.cf.add('f', 'a'), true);
      assert.equal(await client.cf.addNX('f', 'a'), false);
      assert.deepEqual(await client.cf.insert('f', ['b', 'c']), [true, true]);
      // CF.INSERTNX answers integers in RESP3 too, as RedisBloom's does
      assert.deepEqual(await client.cf.insertNX('f', ['b', 'd']), RESP === 3 ? [0, 1] : [false, true]);
      assert.equal(await client.cf.exists('f', 'a'), true);
      assert.deepEqual(await client.sendCommand(['CF.MEXISTS', 'f', 'a', 'zz']),
                       RESP === 3 ? [true, false] : [1, 0]);
      assert.equal(await client.cf.count('f', 'a'), 2);
      assert.equal(await client.cf.del('f', 'a'), true);
      assert.equal(await client.cf.count('f', 'a'), 1);
      const info = await client.cf.info('f');
      assert.equal(info['Number of buckets'], 256);
      assert.equal(info['Number of items inserted'], 4);
      assert.equal(info['Number of items deleted'], 1);
      assert.equal(info['Bucket size'], 4);
      assert.equal(info['Expansion rate'], 2);
      await assert.rejects(client.cf.insert('missing', ['a'], { NOCREATE: true }),
                           rejectsWith('ERR not found'));
      assert.equal(await client.cf.exists('missing', 'a'), false);
    });

    test('TDIGEST.*: doubles as numbers in both protocols, ranks as numbers, INFO an object', async () => {
      assert.equal(await client.tDigest.create('d', { COMPRESSION: 50 }), 'OK');
      assert.equal(await client.tDigest.add('d', [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]), 'OK');
      assert.deepEqual(await client.tDigest.quantile('d', [0, 0.5, 1]), [1, 6, 10]);
      assert.deepEqual(await client.tDigest.cdf('d', [1, 5]), [0.05, 0.45]);
      assert.deepEqual(await client.tDigest.rank('d', [0, 5, 11]), [-1, 4, 10]);
      assert.deepEqual(await client.tDigest.revRank('d', [5]), [5]);
      // (past the end the server answers inf, which node-redis reads as NaN in RESP2)
      assert.deepEqual(await client.tDigest.byRank('d', [0, 3]), [1, 4]);
      assert.deepEqual(await client.tDigest.byRevRank('d', [0, 3]), [10, 7]);
      assert.equal(await client.tDigest.min('d'), 1);
      assert.equal(await client.tDigest.max('d'), 10);
      assert.equal(await client.tDigest.trimmedMean('d', 0.1, 0.9), 5.5);
      assert.equal(await client.tDigest.merge('m', ['d', 'd'], { COMPRESSION: 80 }), 'OK');
      const info = await client.tDigest.info('m');
      assert.equal(info['Compression'], 80);
      assert.equal(info['Observations'], 20);
      assert.equal(await client.tDigest.reset('m'), 'OK');
      assert.ok(Number.isNaN(await client.tDigest.min('m')));
      await assert.rejects(client.tDigest.add('missing', [1]),
                           rejectsWith('ERR T-Digest: key does not exist'));
    });
  });
}
