'use strict';
// obj.$fields(): every field of an object read at one instant, as
// { name: value } in declaration order, each value as its getter gives it;
// inside a block, the block's snapshot with its own writes.
const test = require('node:test');
const assert = require('node:assert/strict');
const uniheap = require('..');
const { HeapD, useHeap } = require('./helpers');

const d = new HeapD();
let heap;
useHeap(d, (h) => { heap = h; });

const ALL = {
  flag: 'bool', tiny: 'i8', small: 'i16', mid: 'i32', big: 'i64', ratio: 'f32', wide: 'f64',
  name: 'string', raw: 'bytes', other: 'ref', typed: 'ref:t.fields.Leaf',
};

/** What the getters give, field by field. */
function byGetters(obj) {
  return Object.fromEntries(Object.keys(ALL).map((f) => [f, obj[f]]));
}

function assertSameFields(obj, what) {
  const got = obj.$fields();
  assert.deepEqual(Object.keys(got), Object.keys(ALL), `${what}: declaration order`);
  const want = byGetters(obj);
  for (const f of Object.keys(ALL)) {
    if (want[f] instanceof uniheap.PObject) {
      assert.ok(got[f].$equals(want[f]), `${what}: ${f} names the same object`);
      assert.equal(got[f].$className, want[f].$className);
    } else {
      assert.deepEqual(got[f], want[f], `${what}: ${f}`);
    }
  }
  return got;
}

test('$fields() gives every field type as the getters do, outside and inside a block', () => {
  const Leaf = heap.defineClass('t.fields.Leaf', { v: 'i64' });
  const K = heap.defineClass('t.fields.Kinds', ALL);
  const leaf = new Leaf({ v: 7 });
  const k = new K();
  const zero = assertSameFields(k, 'zeroed');
  assert.deepEqual(zero, {
    flag: false, tiny: 0, small: 0, mid: 0, big: 0, ratio: 0, wide: 0, name: null, raw: null,
    other: null, typed: null,
  });
  const values = {
    flag: true, tiny: -128, small: 32767, mid: -(2 ** 31), big: Number.MIN_SAFE_INTEGER,
    ratio: 0.1, wide: Math.PI, name: 'pünkt ✓ 🐍', raw: Buffer.from([0, 1, 255]), other: leaf,
    typed: leaf,
  };
  Object.assign(k, values);
  const got = assertSameFields(k, 'outside a block');
  assert.equal(got.ratio, Math.fround(0.1));
  assert.equal(got.typed.v, 7);
  assert.ok(Buffer.isBuffer(got.raw));
  heap.atomic(() => assertSameFields(k, 'inside a block'));
  // Large string and bytes values (bigger than the addon's bytes buffer).
  k.name = 'x'.repeat(100000);
  k.raw = Buffer.alloc(70000, 9);
  assertSameFields(k, 'large values');
  // An untyped ref to a collection is its proxy.
  const m = new uniheap.PMap(heap);
  k.other = m;
  assert.ok(k.$fields().other.$equals(m));
});

test('$fields() inside a block shows the block\'s own uncommitted writes', () => {
  const P = heap.defineClass('t.fields.Pair', { a: 'i64', s: 'string', b: 'bytes', w: 'f64' });
  const p = new P({ a: 1, s: 'one', b: Buffer.from('one'), w: 1.5 });
  const rollBack = new Error('roll back');
  assert.throws(() => heap.atomic(() => {
    p.a = 2;
    p.s = 'two';
    p.b = Buffer.from('two');
    assert.deepEqual(p.$fields(), { a: 2, s: 'two', b: Buffer.from('two'), w: 1.5 });
    throw rollBack;
  }), (e) => e === rollBack);
  assert.deepEqual(p.$fields(), { a: 1, s: 'one', b: Buffer.from('one'), w: 1.5 });
});

test('$fields() of an object with no fields is {}', () => {
  const E = heap.defineClass('t.fields.Empty', {});
  const e = new E();
  assert.deepEqual(e.$fields(), {});
  heap.atomic(() => assert.deepEqual(e.$fields(), {}));
});

test('$fields(): an i64 beyond 2^53 - 1 is a RangeError naming the field, as its getter', () => {
  const B = heap.defineClass('t.fields.Big', { n: 'i32', v: 'i64' });
  const b = new B({ n: 1, v: 2n ** 53n });
  assert.throws(() => b.v, /t\.fields\.Big\.v holds 9007199254740992/);
  assert.throws(() => b.$fields(), (e) => e instanceof RangeError &&
    /t\.fields\.Big\.v holds 9007199254740992.*\$getBigInt\("v"\)/.test(e.message));
  b.v = -(2 ** 53) + 1;
  assert.deepEqual(b.$fields(), { n: 1, v: -(2 ** 53) + 1 });
});

test('$fields() of a freed object throws FreedObjectError, inside a block too', () => {
  const P = heap.defineClass('t.fields.Gone', { a: 'i64', s: 'string' });
  const p = new P({ a: 1, s: 'x' });
  const again = heap.proxy(p.$ref);
  heap.free(p);
  assert.throws(() => p.$fields(), uniheap.FreedObjectError);
  assert.throws(() => again.$fields(), uniheap.FreedObjectError);
  heap.atomic(() => assert.throws(() => again.$fields(), uniheap.FreedObjectError));
  // Its slot reused by a new object: still the old proxy's error.
  new P({ a: 2, s: 'y' });
  assert.throws(() => again.$fields(), uniheap.FreedObjectError);
});

test('$fields() of a proxy made from a reference', () => {
  const G = heap.defineClass('t.fields.Gen', { x: 'i16', s: 'string' });
  const g = new G({ x: -5, s: 'gen' });
  assert.deepEqual(heap.proxy(g.$ref).$fields(), { x: -5, s: 'gen' });
});
