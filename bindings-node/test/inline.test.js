'use strict';
// Inline string and bytes fields ('string:N', 'bytes:N'; FORMAT.md 3.2):
// the format's layout, round trips in and out of blocks, the refusal of a
// value longer than the capacity, $fields() from one copy of the record,
// generic proxies, capacity mismatches.
const test = require('node:test');
const assert = require('node:assert/strict');
const uniheap = require('..');
const { HeapD, useHeap } = require('./helpers');

const d = new HeapD();
let heap;
useHeap(d, (h) => { heap = h; });

const REC = { key: 'i64', blob: 'bytes:10', flag: 'i8', text: 'string:5' };

test('inline fields are laid out by the format rule', () => {
  const R = heap.defineClass('t.inline.Rec', REC);
  new R();
  const c = heap.classes().find((x) => x.name === 't.inline.Rec');
  assert.ok(c, 'class in the table');
  assert.deepEqual(c.fields.map((f) => f.offset), [16, 24, 38, 40]);
  const Y = heap.defineClass('t.inline.Ycsb',
    Object.fromEntries([...Array(10).keys()].map((i) => [`field${i}`, 'bytes:100'])));
  new Y();
  const y = heap.classes().find((x) => x.name === 't.inline.Ycsb');
  assert.equal(y.payloadSize, 1040);
  assert.deepEqual(c.fields[1], {
    name: 'blob', type: 'inline bytes', offset: 24, refClass: 0, capacity: 10,
  });
});

test('inline values round-trip, in and out of blocks', () => {
  const R = heap.defineClass('t.inline.Rec', REC);
  const r = new R({ key: 7, blob: Buffer.from('0123456789'), text: 'hé' });
  assert.deepEqual(r.blob, Buffer.from('0123456789'));
  assert.equal(r.text, 'hé');
  const fresh = new R();
  assert.deepEqual(fresh.blob, Buffer.alloc(0));
  assert.equal(fresh.text, '');
  r.blob = new Uint8Array([1, 2, 3]);
  assert.deepEqual(r.blob, Buffer.from([1, 2, 3]));
  assert.throws(() => heap.atomic(() => {
    r.blob = Buffer.from('inside');
    assert.deepEqual(r.blob, Buffer.from('inside'));
    assert.deepEqual(r.$fields().blob, Buffer.from('inside'));
    throw new Error('roll back');
  }), /roll back/);
  assert.deepEqual(r.blob, Buffer.from([1, 2, 3]));
  heap.atomic(() => { r.blob = Buffer.from('one'); r.blob = Buffer.from('two'); });
  assert.deepEqual(r.blob, Buffer.from('two'));
  assert.deepEqual(r.$fields(), { key: 7, blob: Buffer.from('two'), flag: 0, text: 'hé' });
});

test('a value longer than the capacity is refused, naming field, capacity, length', () => {
  const R = heap.defineClass('t.inline.Rec', REC);
  const r = new R({ blob: Buffer.from('keep') });
  assert.throws(() => { r.blob = Buffer.alloc(11); },
    (e) => e instanceof uniheap.ValueRangeError && /blob/.test(e.message) &&
      /10/.test(e.message) && /11/.test(e.message));
  assert.deepEqual(r.blob, Buffer.from('keep'));
  assert.throws(() => { r.text = 'ééé'; }, uniheap.ValueRangeError);
  assert.throws(() => { r.blob = 'a string'; }, TypeError);
  assert.throws(() => { r.blob = null; }, TypeError);
  assert.throws(() => heap.defineClass('t.inline.Bad', { v: 'bytes:0' }), TypeError);
  assert.throws(() => heap.defineClass('t.inline.Bad2', { v: 'i64:4' }), TypeError);
});

test('new C(values) of inline values only is one step, and refuses what the setters refuse', () => {
  const R = heap.defineClass('t.inline.Rec', REC);
  const r = new R({ blob: Buffer.from('abc'), text: 'hé' });
  assert.deepEqual(r.$fields(), { key: 0, blob: Buffer.from('abc'), flag: 0, text: 'hé' });
  const y = heap.atomic(() => new R({ text: 'in' }));
  assert.equal(y.text, 'in');
  assert.throws(() => new R({ blob: 'a string' }), /t\.inline\.Rec\.blob.*Uint8Array/);
  assert.throws(() => new R({ text: Buffer.from('x') }), /t\.inline\.Rec\.text.*string/);
  assert.throws(() => new R({ blob: Buffer.alloc(11) }), uniheap.ValueRangeError);
  assert.throws(() => new R({ text: 'x', key: 'y' }), TypeError);
  assert.throws(() => heap.atomic(() => {
    new R({ blob: Buffer.from('b'), text: 'too long' });
  }), uniheap.ValueRangeError);
});

test('another capacity is another layout', () => {
  new (heap.defineClass('t.inline.Cap', { v: 'bytes:10' }))();
  assert.throws(() => heap.defineClass('t.inline.Cap', { v: 'bytes:11' }), (e) => e instanceof uniheap.ClassMismatchError &&
    /capacity 10/.test(e.message) && /capacity 11/.test(e.message));
});
