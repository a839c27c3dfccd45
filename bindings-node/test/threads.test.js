'use strict';
// Worker threads: each connects its own session over the process's one
// mapping; objects written in one thread are seen in the others; closing a
// heap in one thread never unmaps what another still reads; a worker that
// is terminated with its heap open takes its session with it.
const test = require('node:test');
const assert = require('node:assert/strict');
const { Worker } = require('node:worker_threads');
const uniheap = require('..');
const { HeapD, useHeap } = require('./helpers');

const d = new HeapD();
let heap;
useHeap(d, (h) => { heap = h; });

const LIB = JSON.stringify(require.resolve('..'));

/** Run code in a worker thread (eval); resolves with its messages. */
function inWorker(code, data) {
  return new Promise((resolve, reject) => {
    const msgs = [];
    const w = new Worker(`const uniheap = require(${LIB});
      const { workerData, parentPort } = require('node:worker_threads');
      ${code}`, { eval: true, workerData: data });
    w.on('message', (m) => msgs.push(m));
    w.on('error', reject);
    w.on('exit', (c) => (c === 0 ? resolve(msgs) : reject(new Error(`worker exit ${c}`))));
  });
}

test('a worker thread shares the mapping and sees and makes changes', async () => {
  const Counter = heap.defineClass('t.thr.Counter', { n: 'i64' });
  const c = new Counter({ n: 1 });
  heap.roots.set('t.thr.counter', c);
  const [info, n] = await inWorker(`
    const h = uniheap.connect({ socket: workerData });
    const c = h.roots.get('t.thr.counter');
    for (let i = 0; i < 1000; i++) h.atomic(() => { c.n += 1; });
    parentPort.postMessage(h.info());
    parentPort.postMessage(c.n);
    h.close();`, d.sock);
  assert.equal(n, 1001);
  assert.equal(c.n, 1001);
  assert.equal(info.path, heap.info().path);
  assert.notEqual(info.session, heap.info().session);
});

test('threads increment one counter concurrently without losing updates', async () => {
  const c = heap.roots.get('t.thr.counter');
  const start = c.n;
  const code = `
    const h = uniheap.connect({ socket: workerData });
    h.maxTries = 1000000;
    const c = h.roots.get('t.thr.counter');
    for (let i = 0; i < 500; i++) h.atomic(() => { c.n += 1; });
    h.close();`;
  const runs = [inWorker(code, d.sock), inWorker(code, d.sock)];
  heap.maxTries = 1000000;
  for (let i = 0; i < 500; i++) heap.atomic(() => { c.n += 1; });
  heap.maxTries = 100;
  await Promise.all(runs);
  assert.equal(c.n, start + 1500);
});

test('closing the main thread\'s heap leaves a worker\'s mapping in place', async () => {
  const { port1, port2 } = new MessageChannel();
  const w = new Worker(`const uniheap = require(${LIB});
    const { workerData } = require('node:worker_threads');
    const port = workerData.port;
    const h = uniheap.connect({ socket: workerData.sock });
    const c = h.roots.get('t.thr.counter');
    port.postMessage('ready');
    port.on('message', () => {
      let sum = 0;
      for (let i = 0; i < 100000; i++) sum += c.n;	// reads in place
      port.postMessage(sum / 100000);
      h.close();
      port.close();
    });`, { eval: true, workerData: { port: port2, sock: d.sock }, transferList: [port2] });
  const next = () => new Promise((r) => port1.once('message', r));
  assert.equal(await next(), 'ready');
  const n = heap.roots.get('t.thr.counter').n;
  heap.close();		// the worker's session keeps the mapping
  port1.postMessage('go');
  assert.equal(await next(), n);
  await new Promise((r) => w.on('exit', r));
  port1.close();
  heap = uniheap.connect({ socket: d.sock });
  assert.equal(heap.roots.get('t.thr.counter').n, n);
});

test('a worker terminated with an open heap and block leaves nothing locked', async () => {
  const c = heap.roots.get('t.thr.counter');
  const before = c.n;
  const w = new Worker(`const uniheap = require(${LIB});
    const { workerData, parentPort } = require('node:worker_threads');
    const h = uniheap.connect({ socket: workerData });
    const c = h.roots.get('t.thr.counter');
    h.begin();
    c.n = -1;
    parentPort.postMessage('in-block');
    setInterval(() => {}, 1000);`, { eval: true, workerData: d.sock });
  await new Promise((r) => w.once('message', r));
  await w.terminate();
  heap.atomic(() => { c.n += 1; });	// the lock is gone with the session
  assert.equal(c.n, before + 1);
});
