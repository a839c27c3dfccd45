'use strict';
// Waiting for changes (lib/wait.js, src/wait.cc): what wakes heap.changed()
// and heap.waitSync() (another process's commit, this process's, every
// kind of object, the roots), since, timeouts, freed objects, waits in
// blocks, AbortSignal, watch(), close() during waits, worker threads; that
// the event loop and libuv's threadpool keep running while waits are
// pending; and a missed-wake-up race: ping-pong between two Node processes
// (tests/notify/peer.js) for UNIHEAP_WAIT_ROUNDS rounds (20,000 by
// default), and with a C process, each wait bounded by 10 s.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const { Worker } = require('node:worker_threads');
const { getEventListeners } = require('node:events');
const uniheap = require('..');
const {
  HeapD, useHeap, WORKERS, REPO, spawnNode, finished, stopProcess, binary, track, sleep,
} = require('./helpers');

const PEER = path.join(REPO, 'tests', 'notify', 'peer.js');
const ROUNDS = Number(process.env.UNIHEAP_WAIT_ROUNDS || 20000);
const LONG = 10000;	// ms: a bound no wait here should come near

const d = new HeapD();
let heap;
let Cell;
useHeap(d, (h) => {
  heap = h;
  Cell = heap.defineClass('t.wait.Cell', { n: 'i64', s: 'string' });
});

/** A new cell under root name. */
function cell(name, n = 0) {
  const c = new Cell({ n });
  heap.roots.set(name, c);
  return c;
}

test('a commit of another process wakes changed() and waitSync()', async () => {
  const c = cell('t.wait.x');
  const tok = heap.token(c);
  assert.equal(typeof tok, 'bigint');
  const pending = heap.changed(c, { timeout: LONG });
  const child = spawnNode(path.join(WORKERS, 'wait_writer.js'), ['t.wait.x', 'n', 7, 1, 20], d);
  const out = finished(child);
  try {
    const now = await pending;
    assert.equal(typeof now, 'bigint');
    assert.notEqual(now, tok);
    assert.equal(c.n, 7);
    assert.equal(heap.token(c), now);
    assert.equal((await out).code, 0);
  } finally {
    await stopProcess(child);
  }
  // waitSync blocks this thread: the writer is another process.
  const since = heap.token(c);
  const child2 = spawnNode(path.join(WORKERS, 'wait_writer.js'), ['t.wait.x', 'n', 8, 1, 50], d);
  const out2 = finished(child2);
  try {
    const now = heap.waitSync(c, { since, timeout: LONG });
    assert.notEqual(now, null);
    assert.notEqual(now, since);
    assert.equal(c.n, 8);
    assert.equal((await out2).code, 0);
  } finally {
    await stopProcess(child2);
  }
});

test('since: a change between token() and the wait is not lost', async () => {
  const c = cell('t.wait.since');
  for (const wait of [(o, opt) => heap.changed(o, opt), (o, opt) => heap.waitSync(o, opt)]) {
    const tok = heap.token(c);
    c.n += 1;
    const now = await wait(c, { since: tok, timeout: LONG });
    assert.equal(now, heap.token(c));
    assert.notEqual(now, tok);
    // A since that is current: no change, so the timeout.
    assert.equal(await wait(c, { since: now, timeout: 0 }), null);
  }
  // The token as a number is accepted too; a bad since is refused.
  const tok = heap.token(c);
  c.n += 1;
  assert.notEqual(heap.waitSync(c, { since: Number(tok), timeout: 0 }), null);
  assert.throws(() => heap.waitSync(c, { since: -1n }), TypeError);
  assert.throws(() => heap.waitSync(c, { since: 'x' }), TypeError);
  await assert.rejects(heap.changed(c, { since: 1.5 }), TypeError);
});

test('timeouts: null once they pass, not before; 0 just looks', async () => {
  const c = cell('t.wait.timeout');
  for (const ms of [0, 30, 120]) {
    let t0 = process.hrtime.bigint();
    assert.equal(await heap.changed(c, { timeout: ms }), null);
    assert.ok(process.hrtime.bigint() - t0 >= BigInt(ms) * 1000000n, `changed, ${ms} ms`);
    t0 = process.hrtime.bigint();
    assert.equal(heap.waitSync(c, { timeout: ms }), null);
    assert.ok(process.hrtime.bigint() - t0 >= BigInt(ms) * 1000000n, `waitSync, ${ms} ms`);
  }
  // Longer than a wait session's slice (200 ms): the slices add up to it.
  const t0 = process.hrtime.bigint();
  assert.equal(await heap.changed(c, { timeout: 450 }), null);
  assert.ok(process.hrtime.bigint() - t0 >= 450000000n);
  assert.throws(() => heap.waitSync(c, { timeout: -1 }), RangeError);
  await assert.rejects(heap.changed(c, { timeout: 'soon' }), RangeError);
  await assert.rejects(heap.changed(c, { timeout: NaN }), RangeError);
});

test('maps, sorted maps, lists, arrays and the roots have tokens that move', async () => {
  // change(x, i): the i-th change of x, each a real one.
  const things = [
    [new uniheap.PMap(heap), (m, i) => m.set('k', i)],
    [new uniheap.PMap(heap, [['a', 1]]), (m) => (m.has('a') ? m.delete('a') : m.set('a', 1))],
    [new uniheap.PSortedMap(heap, undefined, { key: 'int' }), (m, i) => m.set(i, 'v')],
    [new uniheap.PList(heap), (l, i) => l.push(i)],
    [new uniheap.PList(heap, [1, 2, 3]), (l, i) => { l.set(1, 20 + i); }],
    [new uniheap.PArray(heap, 'i64', 4), (a, i) => { a.set(2, 9 + i); }],
    [heap.ROOTS, (_, i) => heap.roots.set(`t.wait.r${i}`, new Cell({ n: i }))],
    [uniheap.ROOTS, (_, i) => heap.roots.delete(`t.wait.r${i}`)],
  ];
  assert.equal(heap.ROOTS, uniheap.ROOTS);
  for (const [x, change] of things) {
    const what = String(x);
    const tok = heap.token(x);
    assert.equal(heap.waitSync(x, { since: tok, timeout: 0 }), null, what);
    change(x, 1);
    assert.notEqual(heap.token(x), tok, what);
    assert.equal(await heap.changed(x, { since: tok, timeout: LONG }), heap.token(x), what);
    // A pending wait is woken by this process's commit too.
    const pending = heap.changed(x, { timeout: LONG });
    await sleep(5);
    change(x, 2);
    assert.equal(await pending, heap.token(x), what);
  }
});

test('a freed object: token, changed and waitSync throw FreedObjectError, a pending wait too', async () => {
  const c = new Cell({ n: 1 });
  const pending = heap.changed(c, { timeout: LONG });
  await sleep(5);
  heap.free(c);
  await assert.rejects(pending, uniheap.FreedObjectError);
  assert.throws(() => heap.token(c), uniheap.FreedObjectError);
  assert.throws(() => heap.waitSync(c), uniheap.FreedObjectError);
  await assert.rejects(heap.changed(c), uniheap.FreedObjectError);
  assert.throws(() => heap.token({}), TypeError);
  assert.throws(() => heap.token(null), TypeError);
});

test('inside a block, waits throw (UH_ESTATE); token() works', async () => {
  const c = cell('t.wait.block');
  let p;
  heap.atomic(() => {
    assert.equal(typeof heap.token(c), 'bigint');
    assert.throws(() => heap.waitSync(c, { timeout: 0 }), { code: 'UH_ESTATE' });
    p = heap.changed(c, { timeout: 0 });
  });
  await assert.rejects(p, { code: 'UH_ESTATE' });
  heap.begin();
  try {
    assert.throws(() => heap.waitSync(uniheap.ROOTS), { code: 'UH_ESTATE' });
  } finally {
    heap.abort();
  }
  assert.equal(await heap.changed(c, { timeout: 0 }), null);	// fine again outside
});

test('the event loop and the libuv threadpool keep running while waits are pending', async () => {
  const c = cell('t.wait.loop');
  // More waits with no timeout than libuv has threads (4 by default).
  const pending = Array.from({ length: 8 }, () => heap.changed(c));
  let ticks = 0;
  const iv = setInterval(() => { ticks++; }, 5);
  try {
    await sleep(100);
    assert.ok(ticks >= 3, `${ticks} ticks`);
    // fs and crypto run on libuv's threadpool.
    assert.ok(fs.readFileSync(__filename).length > 0);
    assert.ok((await fs.promises.readFile(__filename)).length > 0);
    const key = await new Promise((res, rej) => {
      crypto.pbkdf2('pw', 'salt', 1000, 16, 'sha256', (e, k) => (e ? rej(e) : res(k)));
    });
    assert.equal(key.length, 16);
  } finally {
    clearInterval(iv);
  }
  c.n = 1;
  const toks = await Promise.all(pending);
  for (const t of toks) assert.equal(t, heap.token(c));
});

test('an AbortSignal rejects with AbortError and ends the native wait; the next wait works', async () => {
  const c = cell('t.wait.abort');
  const ac = new AbortController();
  const p = heap.changed(c, { signal: ac.signal });
  setTimeout(() => ac.abort(new Error('enough')), 20);
  await assert.rejects(p, (e) => e instanceof uniheap.AbortError && e.name === 'AbortError' &&
    e.code === 'ABORT_ERR' && e.cause.message === 'enough');
  // Already aborted: rejects at once; a timeout signal works too.
  await assert.rejects(heap.changed(c, { signal: ac.signal }), { name: 'AbortError' });
  await assert.rejects(heap.changed(c, { signal: AbortSignal.timeout(30) }), { name: 'AbortError' });
  await assert.rejects(heap.changed(c, { signal: {} }), TypeError);
  // Aborted as soon as started, many times: every one ends (a cancel that
  // lands before the native wait starts ends it at its next slice).
  const many = [];
  for (let i = 0; i < 50; i++) {
    const a = new AbortController();
    many.push(assert.rejects(heap.changed(c, { signal: a.signal }), { name: 'AbortError' }));
    if (i % 2) a.abort();
    else setImmediate(() => a.abort());
  }
  await Promise.all(many);
  const next = heap.changed(c, { timeout: LONG, signal: new AbortController().signal });
  setTimeout(() => { c.n = 5; }, 10);
  assert.equal(await next, heap.token(c));
  // A signal that never fires does not keep a listener after the wait.
  const quiet = new AbortController().signal;
  assert.equal(await heap.changed(c, { timeout: 10, signal: quiet }), null);
  assert.equal(getEventListeners(quiet, 'abort').length, 0);
});

test('for await over watch() gets a token after each change', async () => {
  const c = cell('t.wait.watch', 0);
  const seen = [];
  const toks = [];
  setTimeout(() => { c.n = 1; }, 10);
  for await (const tok of heap.watch(c)) {
    toks.push(tok);
    seen.push(c.n);
    if (c.n === 5) break;	// ends the iterator: no wait is left pending
    setTimeout(() => { c.n += 1; }, 2);
  }
  assert.deepEqual(seen, [1, 2, 3, 4, 5]);
  assert.equal(new Set(toks).size, 5);
  // A change made before the first next() is seen: watch() takes the token at once.
  const it = heap.watch(c);
  c.n = 6;
  assert.equal((await it.next()).value, heap.token(c));
  await it.return();
  // Changes of another process, and an abort that ends the loop.
  const ac = new AbortController();
  const child = spawnNode(path.join(WORKERS, 'wait_writer.js'), ['t.wait.watch', 'n', 100, 3, 30], d);
  const out = finished(child);
  const got = [];
  try {
    await assert.rejects((async () => {
      for await (const tok of heap.watch(c, { signal: ac.signal })) {
        assert.equal(typeof tok, 'bigint');
        if (!got.includes(c.n)) got.push(c.n);
        if (c.n === 102) ac.abort();
      }
    })(), { name: 'AbortError' });
    assert.deepEqual(got.at(-1), 102);
    assert.equal((await out).code, 0);
  } finally {
    await stopProcess(child);
  }
});

test('close() ends pending waits with HeapClosedError', async () => {
  const h2 = uniheap.connect({ socket: d.sock });
  const c = h2.roots.get('t.wait.x');
  const m = new uniheap.PMap(h2);
  const pending = [h2.changed(c), h2.changed(m), h2.changed(h2.ROOTS, { timeout: LONG })];
  const w = h2.watch(c).next();
  await sleep(20);
  h2.close();
  for (const p of [...pending, w]) await assert.rejects(p, uniheap.HeapClosedError);
  await assert.rejects(h2.changed(h2.ROOTS), uniheap.HeapClosedError);
  assert.throws(() => h2.token(uniheap.ROOTS), uniheap.HeapClosedError);
  assert.throws(() => h2.waitSync(uniheap.ROOTS), uniheap.HeapClosedError);
  // Many at once, some closed as they start.
  const h3 = uniheap.connect({ socket: d.sock });
  const waits = Array.from({ length: 20 }, () => h3.changed(uniheap.ROOTS));
  h3.close();
  for (const p of waits) await assert.rejects(p, uniheap.HeapClosedError);
});

test('worker threads wait too; a worker terminated while it waits goes quietly', async () => {
  const c = cell('t.wait.thr');
  const LIB = JSON.stringify(require.resolve('..'));
  const code = `const uniheap = require(${LIB});
    const { workerData, parentPort } = require('node:worker_threads');
    const h = uniheap.connect({ socket: workerData });
    const c = h.roots.get('t.wait.thr');
    const since = h.token(c);
    parentPort.postMessage('waiting');
    h.changed(c, { since }).then(() => {
      parentPort.postMessage(c.n);
      h.close();
    });`;
  const run = (onWaiting) => new Promise((resolve, reject) => {
    const msgs = [];
    const w = new Worker(code, { eval: true, workerData: d.sock });
    w.on('message', (m) => {
      msgs.push(m);
      if (m === 'waiting') onWaiting(w);
    });
    w.on('error', reject);
    w.on('exit', (x) => resolve([x, msgs]));
  });
  const [code1, msgs1] = await run(() => setTimeout(() => { c.n = 3; }, 20));
  assert.equal(code1, 0);
  assert.deepEqual(msgs1, ['waiting', 3]);
  const [, msgs2] = await run((w) => setTimeout(() => w.terminate(), 20));
  assert.deepEqual(msgs2, ['waiting']);
  assert.equal(heap.waitSync(c, { timeout: 0 }), null);	// this heap is fine
});

test(`ping-pong between two Node processes, ${ROUNDS} rounds: no lost wake-up`, { timeout: 30 * 60000 }, async () => {
  const Notify = heap.defineClass('NotifyCell', { ping: 'i64', pong: 'i64', ts: 'i64' });
  for (const [mode, rounds] of [['async', ROUNDS], ['sync', Math.ceil(ROUNDS / 4)]]) {
    const root = `t.wait.pp.${mode}`;
    heap.roots.set(root, new Notify({ ping: 0, pong: 0, ts: 0 }));
    const env = { UNIHEAP_PEER_WAIT: mode };
    const procs = [spawnNode(PEER, [d.sock, root, 'waiter', rounds], d, env),
      spawnNode(PEER, [d.sock, root, 'writer', rounds], d, env)];
    let waiter;
    let writer;
    try {
      [waiter, writer] = await Promise.all(procs.map(finished));
    } finally {
      await Promise.all(procs.map((p) => stopProcess(p)));
    }
    assert.equal(waiter.code, 0, `${mode} waiter: ${waiter.stderr}`);
    assert.equal(writer.code, 0, `${mode} writer: ${writer.stderr}`);
    assert.match(waiter.stdout, new RegExp(`^peer node waiter: ${rounds} rounds\\n` +
      'latency_us p50=\\d+\\.\\d p99=\\d+\\.\\d max=\\d+\\.\\d\\n$'));
    assert.equal(writer.stdout, `peer node writer: ${rounds} rounds\n`);
    const cellNow = heap.roots.get(root);
    assert.equal(cellNow.ping, rounds);
    assert.equal(cellNow.pong, rounds);
  }
});

test('ping-pong with a C process: each side wakes on the other\'s commits', { timeout: 5 * 60000 }, async () => {
  const rounds = 2000;
  const c = cell('t.wait.c', 0);	// field 0 (n) is the counter; C adds one to odd values
  const { spawn } = require('node:child_process');
  const child = track(spawn(binary('prog_wait_peer'), [d.sock, 'pingpong', 't.wait.c', rounds, 1],
    { stdio: ['ignore', 'pipe', 'pipe'] }));
  const out = finished(child);
  try {
    for (let i = 0; i < rounds; i++) {
      for (;;) {
        const since = heap.token(c);
        if (c.n % 2 === 0) break;
        assert.notEqual(await heap.changed(c, { since, timeout: LONG }), null,
          `no wake-up at round ${i}`);
      }
      c.n += 1;
    }
    const r = await out;
    assert.equal(r.code, 0, r.stderr);
    assert.equal(c.n, 2 * rounds);
  } finally {
    await stopProcess(child);
  }
});
