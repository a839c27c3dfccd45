'use strict';
// The online GC from Node: every proxy pins its object while it lives
// (stats().pins rises as proxies are made, falls once they are collected);
// the leak loop (a block that makes a new node the current one of a root,
// many times what the heap holds) never finds the heap full while heapd's
// collector runs; objects whose proxies a JS array holds survive cycles,
// readable. UNIHEAP_GC_LEAK_STEPS sets the loop's length (the run:
// 10000000 with UNIHEAP_GC_LEAK_HEAP=64M).
const test = require('node:test');
const assert = require('node:assert/strict');
const v8 = require('node:v8');
const vm = require('node:vm');
const uniheap = require('..');
const { HeapD, sleep } = require('./helpers');

v8.setFlagsFromString('--expose-gc');
const gc = global.gc ?? vm.runInNewContext('gc');

const STEPS = Number(process.env.UNIHEAP_GC_LEAK_STEPS ?? 1000000);
const HEAP = process.env.UNIHEAP_GC_LEAK_HEAP ?? '32M';

/** Collect JS garbage and let the registry's callbacks run, until pred()
 * holds (bounded: 200 rounds). */
async function collectUntil(pred) {
  for (let i = 0; i < 200 && !pred(); i++) {
    gc();
    await sleep(10);
  }
  return pred();
}

test('pins rise as proxies are made and fall after they are collected', async () => {
  const d = new HeapD();
  await d.start();
  const heap = uniheap.connect({ socket: d.sock });
  try {
    const Rec = heap.defineClass('t.gc.Rec', { n: 'i64' });
    const m = new uniheap.PMap(heap, undefined, { key: 'string' });
    heap.roots.set('t.gc.map', m);
    heap.atomic(() => { for (let i = 0; i < 1000; i++) m.set(`k${i}`, new Rec({ n: i })); });
    await collectUntil(() => false);
    const base = heap.stats().pins;
    let held = [];
    for (let i = 0; i < 1000; i++) held.push(m.get(`k${i}`));
    assert.ok(heap.stats().pins >= base + 1000, `pins ${heap.stats().pins}, base ${base}`);
    held = null;
    assert.ok(await collectUntil(() => heap.stats().pins <= base),
      `pins ${heap.stats().pins} after collection, base ${base}`);
    const s = heap.stats();
    for (const k of ['pins', 'gcCycles', 'gcGreys', 'gcBusyWaits']) assert.equal(typeof s[k], 'number');
  } finally {
    heap.close();
    await d.destroy();
  }
});

test('a proxy collected after close() unpins nothing', async () => {
  const d = new HeapD();
  await d.start();
  const heap = uniheap.connect({ socket: d.sock });
  try {
    const Rec = heap.defineClass('t.gc.Late', { n: 'i64' });
    let r = new Rec({ n: 1 });
    assert.equal(r.n, 1);
    heap.close();
    r = null;
    await collectUntil(() => false);
  } finally {
    heap.close();
    await d.destroy();
  }
});

function collectorPresent(d) {
  const r = d.heapctl('gc', '--wait');
  return r.status === 0;
}

test('the leak loop never fills the heap; held proxies survive cycles', async () => {
  const d = new HeapD(undefined, { size: HEAP });
  await d.start();
  const heap = uniheap.connect({ socket: d.sock });
  try {
    assert.ok(collectorPresent(d), 'heapctl gc --wait ran a cycle');
    const Node = heap.defineClass('t.gc.Node', { v: 'i64', next: 'ref' });
    const Head = heap.defineClass('t.gc.Head', { cur: 'ref' });
    const head = new Head();
    heap.roots.set('t.gc.head', head);
    const kept = [];
    for (let n = 0; n < STEPS; n++) {
      heap.atomic(() => { head.cur = new Node({ v: n }); });
      if (n % 1000 === 0) {
        if (kept.length < 100) kept.push(head.cur);
        // the registry's callbacks, which release dead proxies' pins, run
        // from the event loop
        await new Promise(setImmediate);
      }
    }
    assert.equal(head.cur.v, STEPS - 1);
    for (let c = 0; c < 2; c++) assert.equal(d.heapctl('gc', '--wait').status, 0);
    for (let i = 0; i < kept.length; i++) assert.equal(kept[i].v, i * 1000);
  } finally {
    heap.close();
    await d.destroy();
  }
});
