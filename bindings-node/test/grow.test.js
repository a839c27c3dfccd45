'use strict';
// A heap that grows while this process is connected (FORMAT.md 1.1): the
// objects another process made in the part the heap grew into after this
// process connected are read and written through proxies here (the
// mapping's ArrayBuffer spans the most the heap may grow to, and a
// reference past what is mapped is checked by libuniheap, which maps that
// part first), and info() reports the heap's size now, the most it may grow
// to and the bytes its arenas hold, as heapctl status does.
//
// The other process is tests/c/prog_grow_fill (its blocks: chains of 200
// GrowFill records valued id * 1e9 + k * 1000 + i, under the roots
// "w<id>.<k>").
const test = require('node:test');
const assert = require('node:assert/strict');
const uniheap = require('..');
const { HeapD, runProg } = require('./helpers');

const MIB = 2 ** 20;
const REC = 200;
const BLOCKS = 1500;	// 1500 x 200 x 64 bytes ~ 18 MiB: past the 16 MiB pool

let d;
let heap;
test.beforeEach(async () => {
  d = await new HeapD(undefined, {
    size: '16M', createArgs: ['--max-size', '256M', '--log-size', '256K'],
  }).start();
  heap = uniheap.connect({ socket: d.sock });
});
test.afterEach(async () => {
  heap?.close();
  await d.destroy();
});

test('objects in the part the heap grew into after connect: read and written', () => {
  let i = heap.info();
  assert.equal(i.heapSize, 16 * MIB);
  assert.equal(i.curSize, 16 * MIB);
  assert.equal(i.maxSize, 256 * MIB);
  assert.ok(i.usedSize > 0 && i.usedSize <= i.curSize);
  const GrowFill = heap.defineClass('GrowFill', {
    value: 'i64', next: 'ref', a: 'i64', b: 'i64', c: 'i64', d: 'i64',
  });

  let r = runProg('prog_grow_fill', d.sock, 'write', 0, BLOCKS);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, new RegExp(`blocks ${BLOCKS}`));

  const beyond = [];
  for (let k = 0; k < BLOCKS; k++) {
    let o = heap.roots.get(`w0.${k}`);
    let n = 0;
    for (; o !== null; n++) {
      assert.ok(o instanceof GrowFill);
      assert.equal(o.value, k * 1000 + REC - 1 - n);
      if (o.$offset >= 16 * MIB) beyond.push(o);
      o = o.next;
    }
    assert.equal(n, REC);
  }
  assert.ok(beyond.length > 0, 'no record in the part the heap grew into');

  const rec = beyond[beyond.length - 1];
  heap.atomic(() => { rec.a = rec.value + 1; });
  assert.equal(rec.a, rec.value + 1);

  i = heap.info();
  assert.ok(i.curSize > 16 * MIB);
  assert.equal(i.maxSize, 256 * MIB);
  assert.ok(rec.$offset < i.heapSize && i.heapSize <= i.curSize);
  assert.ok(i.usedSize > 16 * MIB);

  // C reads every block again, the one Node wrote to included.
  require('node:fs').writeFileSync(`${d.dir}/done`, '');
  r = runProg('prog_grow_fill', d.sock, 'read', 1, d.dir);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, new RegExp(`read ${BLOCKS}`));
});
