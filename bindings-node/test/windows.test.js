'use strict';
// Heaps above 4 GiB are read through several typed-array windows
// (lib/views.js). Here the windows are made small, so that a 64 MiB heap
// has hundreds of them and every read goes through the window arithmetic
// a multi-GiB heap uses.
const test = require('node:test');
const assert = require('node:assert/strict');
require('../lib/views').setWindowStepForTests(2 ** 12);
const uniheap = require('..');
const { HeapD, useHeap } = require('./helpers');

const d = new HeapD();
let heap;
useHeap(d, (h) => { heap = h; });

test('fields read through many windows', () => {
  const W = heap.defineClass('t.win.W', { a: 'i8', b: 'i16', c: 'i32', e: 'i64', f: 'f64', g: 'f32', r: 'ref' });
  const objs = [];
  heap.atomic(() => {
    for (let i = 0; i < 3000; i++) {
      objs.push(new W({ a: i % 128, b: 0 - i, c: i * 1000, e: i * 2 ** 33, f: i / 3, g: i / 4 }));
    }
  });
  objs.forEach((o, i) => { if (i) o.r = objs[i - 1]; });
  heap.atomic(() => new uniheap.PArray(heap, 'i64', 200000));	// spreads later objects out
  const late = new W({ e: -(2 ** 52), r: objs[0] });
  const offsets = new Set([...objs, late].map((o) => Math.floor(o.$offset / 2 ** 12)));
  assert.ok(offsets.size > 30, `objects in ${offsets.size} windows`);
  objs.forEach((o, i) => {
    assert.deepEqual([o.a, o.b, o.c, o.e, o.f, o.g], [i % 128, 0 - i, i * 1000, i * 2 ** 33, i / 3, i / 4]);
    if (i) assert.ok(o.r.$equals(objs[i - 1]));
  });
  assert.equal(late.e, -(2 ** 52));
  assert.equal(late.r.c, 0);
});
