'use strict';
// Records through their map key, one native call each: map.getFields(key)
// (the lookup and the copy of the whole record), map.setField(key, field,
// value) (the lookup and the write of an inline field) and
// sortedMap.rangeFields(from, to, { limit }), map.putRecord(key, C, values)
// (a new record and the put); each must give what the proxy path gives
// (get(key).$fields(), get(key)[field] = value, set(key, new C(values))).
const test = require('node:test');
const assert = require('node:assert/strict');
const uniheap = require('..');
const { HeapD, useHeap } = require('./helpers');

const d = new HeapD();
let heap;
useHeap(d, (h) => { heap = h; });

const REC = {
  key: 'i64', blob: 'bytes:10', flag: 'i8', text: 'string:5', f: 'f64', ok: 'bool', small: 'i16',
  mid: 'i32', g: 'f32',
};

function key(i) {
  return `k${String(i).padStart(3, '0')}`;
}

function fill(m, R, n) {
  heap.atomic(() => {
    for (let i = 0; i < n; i++) {
      m.set(key(i), new R({
        key: i * 1000003, blob: Buffer.from(`b${i}`), flag: -3, text: 'hé', f: 1.5, ok: i % 2 === 0,
        small: -i, mid: 70000 + i, g: 0.25,
      }));
    }
  });
}

for (const M of [uniheap.PMap, uniheap.PSortedMap]) {
  test(`${M.name}: putRecord(key, C, values) stores what set(key, new C(values)) would`, () => {
    const R = heap.defineClass('t.records.R', REC);
    const m = new M(heap);
    assert.equal(m.putRecord('a', R, { blob: Buffer.from('xyz'), text: 'hé' }), m);
    assert.deepEqual(m.get('a').$fields(), new R({ blob: Buffer.from('xyz'), text: 'hé' }).$fields());
    assert.ok(m.get('a') instanceof R);
    // replaced: without freeOld the old record lives on; with it, it is freed
    const first = m.get('a');
    m.putRecord('a', R, { blob: Buffer.from('2') });
    assert.deepEqual(first.blob, Buffer.from('xyz'), 'still there: not freed');
    const second = m.get('a');
    m.putRecord('a', R, { blob: Buffer.from('3') }, true);
    assert.throws(() => second.blob, uniheap.FreedObjectError);
    assert.deepEqual(m.getFields('a').blob, Buffer.from('3'));
    assert.equal(m.size, 1);
    // in a block: part of it, gone when it rolls back
    assert.throws(() => heap.atomic(() => {
      m.putRecord('b', R, { text: 'in' });
      assert.equal(m.getFields('b').text, 'in');
      throw new Error('roll back');
    }), /roll back/);
    assert.equal(m.get('b'), undefined);
    // values that no inline field takes as they are, and unknown fields
    assert.throws(() => m.putRecord('c', R, { key: 5 }), TypeError);
    assert.throws(() => m.putRecord('c', R, { blob: 'not bytes' }), TypeError);
    assert.throws(() => m.putRecord('c', R, { nope: Buffer.from('x') }), /no field "nope"/);
    assert.throws(() => m.putRecord('c', R, { blob: Buffer.alloc(11) }), uniheap.ValueRangeError);
    // larger than the addon's bytes buffer (64 KiB): not packed, same error
    assert.throws(() => m.putRecord('c', R, { blob: Buffer.alloc(70000) }), uniheap.ValueRangeError);
    assert.throws(() => m.putRecord('c', R, { text: 'é'.repeat(30000) }), uniheap.ValueRangeError);
    assert.equal(m.get('c'), undefined, 'nothing stored by a refused call');
  });

  test(`${M.name}: getFields(key) is get(key).$fields(), one native call`, () => {
    const R = heap.defineClass('t.records.R', REC);
    const m = new M(heap);
    fill(m, R, 20);
    for (let i = 0; i < 20; i++) assert.deepEqual(m.getFields(key(i)), m.get(key(i)).$fields());
    assert.equal(m.getFields('missing'), undefined);
    heap.atomic(() => {
      m.get(key(3)).blob = Buffer.from('inside');
      assert.deepEqual(m.getFields(key(3)).blob, Buffer.from('inside'), 'the block\'s own write');
    });
    m.set('n', 3);
    m.set('list', new uniheap.PList(heap));
    assert.throws(() => m.getFields('n'), uniheap.TypeMismatchError);
    assert.throws(() => m.getFields('list'), uniheap.TypeMismatchError);
  });

  test(`${M.name}: setField(key, field, value) writes an inline field in place`, () => {
    const R = heap.defineClass('t.records.R', REC);
    const m = new M(heap);
    fill(m, R, 3);
    const rec = m.get(key(1));
    assert.equal(m.setField(key(1), 'blob', Buffer.from('new')), true);
    assert.equal(m.setField(key(1), 'text', 'ab'), true);
    assert.deepEqual(rec.blob, Buffer.from('new'), 'the same record, written in place');
    assert.equal(rec.text, 'ab');
    assert.equal(m.setField('missing', 'blob', Buffer.from('x')), false);
    assert.throws(() => heap.atomic(() => {
      m.setField(key(2), 'blob', new Uint8Array([1, 2]));
      assert.deepEqual(m.get(key(2)).blob, Buffer.from([1, 2]));
      throw new Error('roll back');
    }), /roll back/);
    assert.deepEqual(m.get(key(2)).blob, Buffer.from('b2'), 'rolled back with its block');
    assert.throws(() => m.setField(key(1), 'blob', Buffer.alloc(11)),
      (e) => e instanceof uniheap.ValueRangeError && /blob/.test(e.message));
    assert.throws(() => m.setField(key(1), 'key', Buffer.from('x')), uniheap.TypeMismatchError);
    assert.throws(() => m.setField(key(1), 'nofield', Buffer.from('x')), /nofield/);
    assert.throws(() => m.setField(key(1), 'blob', 7), TypeError);
    assert.deepEqual(rec.blob, Buffer.from('new'), 'nothing written by a refused call');
  });
}

test('a bytes-keyed map takes its keys by value', () => {
  const R = heap.defineClass('t.records.R', REC);
  const m = new uniheap.PMap(heap, undefined, { key: 'bytes' });
  const k = Buffer.from('kk');
  m.set(k, new R({ blob: Buffer.from('v') }));
  assert.deepEqual(m.getFields(Buffer.from('kk')).blob, Buffer.from('v'));
  assert.equal(m.setField(k, 'blob', Buffer.from('w')), true);
  assert.deepEqual(m.get(k).blob, Buffer.from('w'));
});

test('long string keys (past the on-stack copy) still look up', () => {
  const R = heap.defineClass('t.records.R', REC);
  const m = new uniheap.PSortedMap(heap);
  const long = 'é'.repeat(300);
  m.set(long, new R({ blob: Buffer.from('long') }));
  assert.deepEqual(m.getFields(long).blob, Buffer.from('long'));
  assert.equal(m.setField(long, 'blob', Buffer.from('l2')), true);
  assert.deepEqual(m.get(long).blob, Buffer.from('l2'));
});

test('rangeFields(from, to, { limit }) is range() with $fields(), in key order', () => {
  const R = heap.defineClass('t.records.R', REC);
  const m = new uniheap.PSortedMap(heap);
  fill(m, R, 100);
  const want = (from, to, limit) => [...m.range(from, to)].slice(0, limit)
    .map(([k, r]) => [k, r.$fields()]);
  assert.deepEqual(m.rangeFields(key(40), undefined, { limit: 5 }), want(key(40), undefined, 5));
  assert.deepEqual(m.rangeFields(undefined, key(2)), want(undefined, key(2)));
  assert.deepEqual(m.rangeFields(key(5), undefined), want(key(5), undefined, 100), 'several batches');
  assert.deepEqual(heap.atomic(() => m.rangeFields(key(90), key(95))), want(key(90), key(95)));
  assert.deepEqual(m.rangeFields(key(99), undefined, { limit: 0 }), []);
  assert.deepEqual(m.rangeFields('z', undefined), []);
  assert.throws(() => m.rangeFields(undefined, undefined, { limit: -1 }), RangeError);
});

test('records with out-of-line fields are read through their proxy', () => {
  const P = heap.defineClass('t.records.P', { name: 'string', data: 'bytes', next: 'ref', n: 'i64' });
  const m = new uniheap.PSortedMap(heap);
  const a = new P({ name: 'a', data: Buffer.from('x'), n: 1 });
  m.set('a', a);
  m.set('b', new P({ name: 'b', next: a, n: 2 }));
  assert.deepEqual(m.getFields('a'), a.$fields());
  const got = m.rangeFields(undefined, undefined);
  assert.deepEqual(got.map(([k]) => k), ['a', 'b']);
  assert.equal(got[1][1].name, 'b');
  assert.ok(got[1][1].next.$equals(a));
  assert.throws(() => m.setField('a', 'name', 'z'), uniheap.TypeMismatchError);
});
