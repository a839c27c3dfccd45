'use strict';
// Zero-copy views of bytes values (PMap.view, PSortedMap.view): a
// Uint8Array over the value's bytes where they lie in the mapping; valid
// while the value lives; empty once the heap is closed, never a read of
// unmapped memory.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const uniheap = require('..');
const { HeapD, useHeap, WORKERS, binary, childEnv } = require('./helpers');
const { spawnSync } = require('node:child_process');

const d = new HeapD();
let heap;
useHeap(d, (h) => { heap = h; });

test('view is the bytes value in place (string, bytes, int keys), no copy', () => {
  const size = heap.info().heapSize;
  let buffer;
  for (const [key, k] of [['string', 'k'], ['bytes', Buffer.from('k')], ['int', 7]]) {
    const m = new uniheap.PMap(heap, null, { key });
    const big = Buffer.alloc(10240);
    for (let i = 0; i < big.length; i++) big[i] = i * 7 & 0xff;
    for (const data of [Buffer.alloc(0), Buffer.from('x'), big]) {
      m.set(k, data);
      const v = m.view(k);
      assert.ok(v instanceof Uint8Array && v instanceof uniheap.BytesView);
      assert.equal(v.length, data.length);
      assert.ok(Buffer.from(v).equals(m.get(k)) && m.get(k).equals(data));
      assert.ok(v.valid);
      // No copy: the view lies on the mapping's one ArrayBuffer, the same
      // for every view, at the same place each time.
      assert.equal(v.buffer.byteLength, size);
      buffer ??= v.buffer;
      assert.equal(v.buffer, buffer);
      assert.equal(m.view(k).byteOffset, v.byteOffset);
      assert.ok(v.byteOffset > 0 && v.byteOffset + v.length <= size);
      assert.equal(typeof v.$ref, 'bigint');
      // In the object holding it, past its header: a bytes object's payload,
      // or for a value of up to 128 bytes the key's entry in the map.
      const holder = Number(v.$ref & 0xffffffffffffn);
      if (data.length > 128) assert.equal(holder + 16, v.byteOffset);
      else assert.ok(v.byteOffset > holder + 16 && v.byteOffset < holder + 16 + 64 + 128);
    }
  }
  // Derived arrays are plain Uint8Arrays (copies, or windows of their own).
  const m = new uniheap.PMap(heap, [['k', Buffer.from('abc')]]);
  const v = m.view('k');
  assert.equal(v.subarray(1).constructor, Uint8Array);
  assert.equal(v.slice(1).constructor, Uint8Array);
  assert.deepEqual([...v.subarray(1)], [0x62, 0x63]);
});

test('view of a PSortedMap, and inside a block', () => {
  const m = new uniheap.PSortedMap(heap, [[1, Buffer.from('one')], [2, Buffer.from('two')]],
    { key: 'int' });
  assert.equal(Buffer.from(m.view(2)).toString(), 'two');
  heap.atomic(() => {
    m.set(3, Buffer.from('three'));	// new in this block
    assert.equal(Buffer.from(m.view(3)).toString(), 'three');
    assert.equal(Buffer.from(m.view(1)).toString(), 'one');
  });
  const v = m.view(3);
  assert.equal(Buffer.from(v).toString(), 'three');
  assert.ok(v.valid);
  // A value made in a block that rolls back is gone with it.
  let w;
  assert.throws(() => heap.atomic(() => {
    m.set(4, Buffer.from('four'));
    w = m.view(4);
    assert.ok(w.valid);
    throw new Error('roll back');
  }), /roll back/);
  assert.equal(w.valid, false);
  assert.equal(m.view(4), undefined);
});

test('view: missing key, a value that is not bytes, a key of the wrong type', () => {
  const Obj = heap.defineClass('t.view.Obj', { n: 'i32' });
  const m = new uniheap.PMap(heap, [['s', 'text'], ['i', 5], ['f', 1.5], ['t', true],
    ['n', null], ['o', new Obj({ n: 1 })], ['b', Buffer.from('ok')]]);
  assert.equal(m.view('missing'), undefined);
  assert.equal(m.get('missing'), undefined);
  for (const [k, type] of [['s', 'string'], ['i', 'i64'], ['f', 'f64'], ['t', 'bool'],
    ['n', 'null'], ['o', 'an object of class t.view.Obj']]) {
    assert.throws(() => m.view(k), (e) => e instanceof TypeError &&
      e.message === `view(): the value is not bytes but ${type}`, k);
  }
  assert.throws(() => m.view(3), uniheap.TypeMismatchError);
  assert.throws(() => m.get(3), uniheap.TypeMismatchError);
  assert.equal(Buffer.from(m.view('b')).toString(), 'ok');
});

test('a replacing set or a delete frees the value: the view is no longer valid', () => {
  const m = new uniheap.PMap(heap);
  m.set('k', Buffer.alloc(100, 0x41));
  const v = m.view('k');
  const copy = Buffer.from(v);	// copy, then check valid: a consistent copy
  assert.ok(v.valid && copy.equals(Buffer.alloc(100, 0x41)));
  m.set('k', Buffer.alloc(100, 0x42));	// frees the old value; its slot may be reused
  for (let i = 0; i < 50; i++) new uniheap.PMap(heap, [['x', Buffer.alloc(100, 0x43)]]);
  assert.equal(v.valid, false);
  assert.equal(v.length, 100);		// still readable, whatever it shows now
  const w = m.view('k');
  assert.ok(w.valid && Buffer.from(w).equals(Buffer.alloc(100, 0x42)));
  m.delete('k');
  assert.equal(w.valid, false);
  assert.equal(m.view('k'), undefined);
  // A PSortedMap frees replaced values too.
  const s = new uniheap.PSortedMap(heap, [['a', Buffer.from('1')]]);
  const x = s.view('a');
  s.set('a', Buffer.from('2'));
  assert.equal(x.valid, false);
});

test('after heap.close() a view is empty (its buffer detached), never a read of unmapped memory', () => {
  const h = uniheap.connect({ socket: d.sock });
  const m = new uniheap.PMap(h, [['k', Buffer.alloc(4096, 9)]]);
  const s = new uniheap.PSortedMap(h, [['k', Buffer.from('sorted')]]);
  const v = m.view('k');
  const sub = v.subarray(10, 20);
  const w = s.view('k');
  const ab = v.buffer;
  assert.equal(v.length, 4096);
  h.close();
  for (const x of [v, sub, w]) {
    assert.equal(x.length, 0);
    assert.equal(x.byteLength, 0);
    assert.equal(x[0], undefined);
    assert.equal(Buffer.from(x).length, 0);
  }
  assert.equal(v.valid, false);
  assert.equal(w.valid, false);
  assert.equal(ab.byteLength, 0);
  assert.throws(() => new Uint8Array(ab, 0, 16), TypeError);
  assert.throws(() => m.view('k'), uniheap.HeapClosedError);
  assert.throws(() => s.view('k'), uniheap.HeapClosedError);
  // The other connection (the same mapping in this process) is unaffected.
  const n = new uniheap.PMap(heap, [['k', Buffer.from('still')]]);
  assert.equal(Buffer.from(n.view('k')).toString(), 'still');
});

test('a view keeps a heap that was not closed mapped until nothing reaches the mapping', () => {
  const r = spawnSync(process.execPath, ['--expose-gc', path.join(WORKERS, 'view_gc.js'),
    binary('heapctl')], { env: childEnv(d), encoding: 'utf8', timeout: 60000 });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.equal(r.stdout.trim(), 'ok');
});
