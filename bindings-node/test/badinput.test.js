'use strict';
// Bad input gets a clear error, never a crash: wrong types, out-of-range
// numbers, invalid declarations, stale and freed proxies, a closed heap,
// proxies of another connection, read-only connections, no heapd.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const uniheap = require('..');
const { HeapD, useHeap, tempDir } = require('./helpers');

const d = new HeapD();
let heap;
let Cell;
useHeap(d, (h) => {
  heap = h;
  Cell = heap.defineClass('t.bad.Cell', { n: 'i32', f: 'f64', s: 'string', b: 'bytes', r: 'ref' });
});

const isErr = (Cls, re) => (e) => e instanceof Cls && (!re || re.test(e.message));

test('wrong value types name the field', () => {
  const c = new Cell();
  assert.throws(() => { c.n = '1'; }, isErr(TypeError, /t\.bad\.Cell\.n is a i32 field/));
  assert.throws(() => { c.n = null; }, TypeError);
  assert.throws(() => { c.f = 1n; }, isErr(TypeError, /t\.bad\.Cell\.f/));
  assert.throws(() => { c.s = 5; }, isErr(TypeError, /string or null/));
  assert.throws(() => { c.b = 'text'; }, isErr(TypeError, /Buffer/));
  assert.throws(() => { c.r = { n: 1 }; }, isErr(TypeError, /persistent object/));
  assert.throws(() => { c.n = 2 ** 31; }, isErr(RangeError, /does not fit i32/));
  assert.throws(() => { c.n = 0.5; }, isErr(RangeError, /not an integer/));
  assert.throws(() => { c.n = NaN; }, RangeError);
  assert.throws(() => new Cell({ nope: 1 }), isErr(TypeError, /has no field "nope"/));
  assert.throws(() => new Cell(5), TypeError);
  assert.throws(() => new uniheap.PMap({}), isErr(TypeError, /Heap/));
});

test('collections refuse wrong keys and values', () => {
  const m = new uniheap.PMap(heap);
  assert.throws(() => m.set(1, 'x'), isErr(uniheap.TypeMismatchError, /keys are strings, not a number/));
  assert.throws(() => m.set(Buffer.from('k'), 1), uniheap.TypeMismatchError);
  assert.throws(() => m.set('k', { plain: 'object' }), isErr(TypeError, /cannot store/));
  assert.throws(() => m.set('k', () => 1), TypeError);
  assert.throws(() => m.set('x'.repeat(5000), 1), isErr(uniheap.InvalidValueError, /at most 4096/));
  const im = new uniheap.PMap(heap, undefined, { key: 'int' });
  assert.throws(() => im.set(1.5, 1), uniheap.ValueRangeError);
  assert.throws(() => im.set(2n ** 64n, 1), uniheap.ValueRangeError);
  assert.throws(() => im.set('1', 1), uniheap.TypeMismatchError);
  assert.throws(() => new uniheap.PMap(heap, [], { key: 'float' }), TypeError);
  assert.throws(() => new uniheap.PMap(heap, [['a', 1n << 70n]]), uniheap.ValueRangeError);
  const l = new uniheap.PList(heap);
  assert.throws(() => l.at('0'), TypeError);
  assert.throws(() => l.set(0, 1), RangeError);
  assert.equal(m.size, 0);
});

test('invalid declarations', () => {
  assert.throws(() => heap.defineClass('t.bad.A', { x: 'int' }), isErr(TypeError, /unknown field type/));
  assert.throws(() => heap.defineClass('t.bad.B', { '1x': 'i32' }), isErr(TypeError, /field names/));
  assert.throws(() => heap.defineClass('t.bad.C', { constructor: 'i32' }), isErr(TypeError, /taken/));
  assert.throws(() => heap.defineClass('t.bad.D', { x: 'ref:t.bad.Nowhere' }),
    isErr(uniheap.ClassMismatchError, /neither declared/));
  assert.throws(() => heap.defineClass('t.bad.E', { x: { type: 'i32', target: 'X' } }), TypeError);
  assert.throws(() => heap.defineClass('', {}), TypeError);
  assert.throws(() => heap.defineClass('x'.repeat(300), {}), uniheap.InvalidValueError);
  class NoName extends uniheap.PObject {}
  assert.throws(() => new NoName(heap), isErr(TypeError, /static className/));
  assert.throws(() => new uniheap.PObject(heap), isErr(TypeError, /abstract/));
  class Twice extends uniheap.PObject {
    static className = 't.bad.Twice';
    static fields = { a: 'i32' };
  }
  class Twice2 extends Twice {
    static className = 't.bad.Twice2';
    static fields = { a: 'i64' };
  }
  assert.throws(() => new Twice2(heap), isErr(TypeError, /declared twice/));
  assert.throws(() => heap.defineClass(42), TypeError);
});

test('freed and stale proxies throw FreedObjectError', () => {
  const c = new Cell({ n: 5, s: 'x' });
  const m = new uniheap.PMap(heap, [['a', 1]]);
  const holder = new Cell({ r: c });
  heap.free(c);
  heap.free(m);
  for (const fn of [() => c.n, () => { c.n = 1; }, () => c.s, () => c.$getBigInt('n'),
    () => m.get('a'), () => m.size, () => heap.roots.set('t.bad.freed', c), () => heap.free(c)]) {
    assert.throws(fn, uniheap.FreedObjectError);
  }
  assert.throws(() => holder.r, isErr(uniheap.FreedObjectError, /t\.bad\.Cell\.r refers to a freed object/));
  // The slot is reused by a new object: the old proxy still does not see it.
  const fresh = [];
  for (let i = 0; i < 2000; i++) fresh.push(new Cell({ n: i }));
  assert.throws(() => c.n, uniheap.FreedObjectError);
  assert.throws(() => heap.proxy(c.$ref), uniheap.FreedObjectError);
  assert.throws(() => heap.proxy(12345n), uniheap.FreedObjectError);
  assert.throws(() => heap.proxy(5), TypeError);
});

test('a closed heap throws HeapClosedError, never touches unmapped memory', () => {
  const h = uniheap.connect({ socket: d.sock });
  const C = h.defineClass('t.bad.Closed', { n: 'i64', s: 'string' });
  const c = new C({ n: 3, s: 'x' });
  const l = new uniheap.PList(h, [1]);
  h.close();
  h.close();		// idempotent
  assert.equal(h.closed, true);
  for (const fn of [() => c.n, () => { c.n = 1; }, () => c.s, () => l[0], () => l.length,
    () => h.roots.get('x'), () => h.atomic(() => 1), () => h.info(), () => new C({ n: 1 }),
    () => new uniheap.PMap(h)]) {
    assert.throws(fn, uniheap.HeapClosedError);
  }
  const h2 = uniheap.connect({ socket: d.sock });
  h2[Symbol.dispose]();	// what `using h2 = ...` calls at the end of its scope
  assert.equal(h2.closed, true);
});

test('proxies of another connection are refused', () => {
  const h = uniheap.connect({ socket: d.sock });
  try {
    const theirs = new uniheap.PList(h);
    const c = new Cell();
    assert.throws(() => { c.r = theirs; }, isErr(TypeError, /another heap connection/));
    assert.throws(() => heap.roots.set('t.bad.x', theirs), TypeError);
    assert.throws(() => new uniheap.PList(heap, [theirs]), TypeError);
  } finally {
    h.close();
  }
});

test('a read-only connection reads and refuses writes', () => {
  const c = new Cell({ n: 8 });
  heap.roots.set('t.bad.ro', c);
  const ro = uniheap.connect({ socket: d.sock, readonly: true });
  try {
    assert.equal(ro.readonly, true);
    const rc = ro.roots.get('t.bad.ro');
    assert.equal(rc.n, 8);
    assert.throws(() => { rc.n = 9; }, uniheap.ReadOnlyError);
    assert.throws(() => new uniheap.PList(ro), uniheap.ReadOnlyError);
    assert.equal(ro.atomic(() => rc.n), 8);
  } finally {
    ro.close();
  }
  assert.equal(c.n, 8);
});

test('bad connect arguments and no heapd', () => {
  assert.throws(() => uniheap.connect({ socket: 5 }), TypeError);
  assert.throws(() => uniheap.connect(null), TypeError);
  const dir = tempDir();
  try {
    const nowhere = path.join(dir, 'none.sock');
    assert.throws(() => uniheap.connect({ socket: nowhere, timeout: 0 }),
      isErr(uniheap.DisconnectedError, /heapd is not running/));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  assert.throws(() => heap.roots.get(5), TypeError);
  assert.throws(() => heap.roots.set('x', 5), TypeError);
  assert.throws(() => { heap.maxTries = 0; }, RangeError);
});
