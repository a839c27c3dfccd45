'use strict';
// A heap whose reservation is above 4 GiB (heapd's default --max-size is
// the file system's room, up to 15 GiB). Node makes no external
// ArrayBuffer above 4 GiB, so the binding sees the mapping through windows
// of at most 4 GiB, an ArrayBuffer each (lib/views.js, src/session.cc).
//
// The second test puts objects past 4 GiB into the file without writing
// what lies below: the heap is on a disk file system, where `heapctl grow`
// allocates blocks without writing them, and heapd's test hook
// UNIHEAP_EXT_FROM places the extension's arenas from 5 GiB on.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const uniheap = require('..');
const { HeapD } = require('./helpers');

const GIB = 2 ** 30;

test('a heap that may grow to 15 GiB: objects, bytes values, views, maps', async () => {
  const d = await new HeapD(undefined, { size: '16M', createArgs: ['--max-size', '15G'] })
    .start();
  const heap = uniheap.connect({ socket: d.sock });
  try {
    assert.equal(heap.info().maxSize, 15 * GIB);
    const P = heap.defineClass('t.big.Point', { x: 'i64', name: 'string' });
    const m = new uniheap.PMap(heap, null, { key: 'string' });
    heap.atomic(() => {
      for (let i = 0; i < 1000; i++) m.set(`k${i}`, new P(heap, { x: i, name: `p${i}` }));
      m.set('bytes', Buffer.from('fifteen'));
      heap.roots.set('t.big', m);
    });
    for (let i = 0; i < 1000; i++) assert.equal(m.get(`k${i}`).x, i);
    const v = m.view('bytes');
    assert.equal(Buffer.from(v).toString(), 'fifteen');
    assert.ok(v.buffer.byteLength <= 4 * GIB);
    assert.ok(v.valid);
  } finally {
    heap.close();
    await d.destroy();
  }
});

function diskDir() {
  for (const base of [process.env.UH_TEST_DISK_DIR, '/var/tmp', os.tmpdir()]) {
    if (!base) continue;
    try {
      const dir = fs.mkdtempSync(path.join(base, 'uniheap-node-big-'));
      if (fs.statfsSync(dir).bavail * fs.statfsSync(dir).bsize > 8 * GIB) return dir;
      fs.rmSync(dir, { recursive: true, force: true });
    } catch { /* next */ }
  }
  return null;
}

test('objects past 4 GiB in the file: made, read and viewed from Node', async (t) => {
  const dir = diskDir();
  if (dir === null) {
    // The point of the test needs 6 GiB of a file system's blocks.
    assert.fail('no file system with 8 GiB free for a 6 GiB heap file (UH_TEST_DISK_DIR)');
  }
  const d = await new HeapD(dir, {
    size: '16M', createArgs: ['--max-size', '8G'], env: { UNIHEAP_EXT_FROM: String(5 * GIB) },
  }).start();
  const heap = uniheap.connect({ socket: d.sock });
  t.after(async () => {
    heap.close();
    await d.destroy();
  });
  const P = heap.defineClass('t.big.Far', { x: 'i64', data: 'bytes' });
  const r = d.heapctl('grow', '6G');
  assert.equal(r.status, 0, r.stderr);
  assert.ok(heap.info().curSize >= 6 * GIB);
  // Arenas fill the pool's share first, then come from the extension at
  // 5 GiB on: allocate until objects lie there.
  const far = [];
  const m = new uniheap.PMap(heap, null, { key: 'int' });
  heap.roots.set('t.far', m);
  for (let i = 0; far.length < 50 && i < 200000; i++) {
    const o = new P(heap, { x: i, data: Buffer.from(`far ${i}`) });
    m.set(i, o);
    if (o.$offset >= 5 * GIB) far.push([i, o]);
  }
  assert.equal(far.length, 50);
  for (const [i, o] of far) {
    assert.ok(o.$offset > 4 * GIB);
    assert.equal(o.x, i);
    assert.equal(m.get(i).x, i);
    assert.equal(Buffer.from(o.data).toString(), `far ${i}`);
    o.x = i + 1;
    assert.equal(m.get(i).x, i + 1);
  }
  // A bytes value out there, viewed in place through its window's buffer:
  // longer than 128 bytes, so a bytes object of its own, made after the far
  // objects (a map keeps a shorter value in the key's entry instead).
  const [k] = far[far.length - 1];
  const text = 'a view past 4 GiB '.repeat(8);
  m.set(k, Buffer.from(text));
  const v = m.view(k);
  assert.equal(Buffer.from(v).toString(), text);
  assert.ok(v.buffer.byteLength <= 4 * GIB && v.valid);
  assert.ok(Number(v.$ref & 0xffffffffffffn) > 4 * GIB);
  assert.ok(heap.check() > far.length);	// objects reachable, all sound
});
