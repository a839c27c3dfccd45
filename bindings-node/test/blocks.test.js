'use strict';
// Blocks: commit, roll back on an exception, nesting (an exception leaving
// an inner level dooms the block), explicit begin/commit/abort, async
// functions and promises refused, lost conflicts retried; roots across
// reconnect and heapd restart.
const test = require('node:test');
const assert = require('node:assert/strict');
const uniheap = require('..');
const { HeapD, useHeap } = require('./helpers');

const d = new HeapD();
let heap;
let Cell;
useHeap(d, (h) => {
  heap = h;
  Cell = heap.defineClass('t.blk.Cell', { n: 'i64', s: 'string' });
});

test('atomic commits, returns fn\'s value, and rolls back on an exception', () => {
  const c = new Cell({ n: 1 });
  assert.equal(heap.atomic((h) => {
    assert.equal(h, heap);
    assert.ok(heap.inBlock);
    c.n = 2;
    c.s = 'two';
    return 'done';
  }), 'done');
  assert.equal(heap.inBlock, false);
  assert.deepEqual([c.n, c.s], [2, 'two']);
  assert.throws(() => heap.atomic(() => {
    c.n = 3;
    c.s = 'three';
    assert.equal(c.n, 3);	// a block sees its own writes
    throw new Error('boom');
  }), /boom/);
  assert.deepEqual([c.n, c.s], [2, 'two']);
  let made;
  assert.throws(() => heap.atomic(() => {
    made = new Cell({ n: 9 });
    heap.roots.set('t.blk.made', made);
    throw new Error('undo');
  }), /undo/);
  assert.equal(heap.roots.get('t.blk.made'), undefined);
  assert.throws(() => made.n, uniheap.FreedObjectError);
});

test('nested blocks flatten; an exception leaving an inner level dooms the block', () => {
  const c = new Cell({ n: 0 });
  heap.atomic(() => {
    c.n = 1;
    heap.atomic(() => { c.n = 2; });
  });
  assert.equal(c.n, 2);
  assert.throws(() => heap.atomic(() => {
    c.n = 5;
    try {
      heap.atomic(() => { throw new Error('inner'); });
    } catch {
      // swallowed: the block is doomed all the same
    }
  }), (e) => e instanceof uniheap.UniheapError && /nested atomic\(\) block/.test(e.message));
  assert.equal(c.n, 2);
});

test('explicit begin, commit and abort', () => {
  const c = new Cell({ n: 0 });
  heap.begin();
  c.n = 10;
  heap.begin();
  c.n = 11;
  heap.commit();
  assert.ok(heap.inBlock);
  heap.commit();
  assert.equal(c.n, 11);
  heap.begin();
  c.n = 12;
  heap.abort();
  assert.equal(c.n, 11);
  assert.throws(() => heap.commit(), (e) => e.code === 'UH_ESTATE');
  assert.throws(() => heap.abort(), (e) => e.code === 'UH_ESTATE');
});

test('async functions and promises are refused, the block rolled back', () => {
  const c = new Cell({ n: 1 });
  assert.throws(() => heap.atomic(async () => { c.n = 2; }), /async function/);
  assert.throws(() => heap.atomic(() => {
    c.n = 3;
    return Promise.resolve(1);
  }), /returned a promise/);
  assert.throws(() => heap.atomic(() => {
    c.n = 4;
    return { then() {} };
  }), /returned a promise/);
  assert.equal(c.n, 1);
  assert.equal(heap.inBlock, false);
  assert.throws(() => heap.atomic(), TypeError);
});

test('a lost conflict is retried, then reported as ConflictError', () => {
  const other = uniheap.connect({ socket: d.sock });
  try {
    const c = new Cell({ n: 0 });
    const mine = other.proxy(c.$ref);
    other.begin();
    mine.n = 100;		// other holds c's lock until it ends its block
    let tries = 0;
    heap.maxTries = 3;
    assert.throws(() => heap.atomic(() => {
      tries++;
      c.n = 1;
    }), uniheap.ConflictError);
    assert.equal(tries, 3);
    assert.ok(heap.stats().conflicts >= 3);
    other.abort();
    heap.atomic(() => { c.n += 1; });
    assert.equal(c.n, 1);
    assert.equal(mine.n, 1);
  } finally {
    heap.maxTries = 100;
    other.close();
  }
});

test('roots survive reconnect and a heapd restart', async () => {
  const c = new Cell({ n: 77, s: 'kept' });
  const m = new uniheap.PSortedMap(heap, [[2, 'b'], [1, c]], { key: 'int' });
  heap.roots.set('t.blk.cell', c);
  heap.roots.set('t.blk.map', m);
  heap.close();
  heap = uniheap.connect({ socket: d.sock });
  assert.equal(heap.roots.get('t.blk.cell').n, 77);
  heap.close();
  await d.restart();
  heap = uniheap.connect({ socket: d.sock });
  const c2 = heap.roots.get('t.blk.cell');
  assert.deepEqual([c2.n, c2.s], [77, 'kept']);
  const m2 = heap.roots.get('t.blk.map');
  assert.deepEqual([...m2.keys()], [1, 2]);
  assert.ok(m2.get(1).$equals(c2));
  assert.ok(heap.check() > 0);
});
