'use strict';
// The online GC from Node: every proxy pins its object while it lives
// (stats().pins rises as proxies are made, falls once they are collected);
// the leak loop (a block that makes a new node the current one of a root,
// many times what the heap holds) never finds the heap full while heapd's
// collector runs; objects whose proxies a JS array holds survive cycles,
// readable. UNIHEAP_GC_LEAK_STEPS sets the loop's length (the run:
// 10000000 with UNIHEAP_GC_LEAK_HEAP=64M). A plain `node` (no --expose-gc)
// whose synchronous loop makes and drops proxies never fills a small heap
// with their pinned objects (test/workers/leak_plain.js).
const test = require('node:test');
const assert = require('node:assert/strict');
const v8 = require('node:v8');
const vm = require('node:vm');
const uniheap = require('..');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
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

/** Run test/workers/leak_plain.js in a plain node (no --expose-gc, no
 * NODE_OPTIONS) on a 16 MiB heap; its parsed result line. */
async function leakPlain(steps, keep) {
  const d = new HeapD(undefined, { size: '16M' });
  await d.start();
  try {
    const env = { ...process.env };
    delete env.NODE_OPTIONS;
    const r = spawnSync(process.execPath,
      [path.join(__dirname, 'workers', 'leak_plain.js'), d.sock, String(steps), String(keep)],
      { encoding: 'utf8', env, timeout: 600000 });
    assert.equal(r.status, 0, `leak_plain exited ${r.status}: ${r.stderr}`);
    const out = JSON.parse(r.stdout.trim().split('\n').pop());
    const st = d.heapctl('status').stdout;
    console.log(`leak_plain ${steps} steps, keep ${keep}: ${r.stdout.trim()}\n` +
      st.split('\n').filter((l) => /^arenas|cycle/.test(l)).slice(0, 3).join('\n'));
    return out;
  } finally {
    await d.destroy();
  }
}

// 400,000 nodes of 32 bytes: about 2.5 times what a 16 MiB heap holds.
test('a plain node loop that drops its proxies at once never fills a small heap', async () => {
  const out = await leakPlain(400000, 0);
  assert.equal(out.steps, 400000);
  assert.equal(out.exposeGc, 'undefined');	// no gc() leaked into the program
});

test('a plain node loop whose proxies die old never fills a small heap', async () => {
  const out = await leakPlain(400000, 5000);
  assert.equal(out.steps, 400000);
});
