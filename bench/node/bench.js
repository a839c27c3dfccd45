#!/usr/bin/env node
'use strict';
// The Node binding's costs, each against a peer measured in the same run:
//   field get / set (i64, outside a block)   vs a plain JS object property
//   empty block (heap.atomic(() => {}))
//   map get of a 100-byte value, 100k and 1M keys, random keys
//                                            vs a JS Map and lmdb-js getBinary
// One process, one thread; its own heapd on a fresh heap on tmpfs
// (/dev/shm), durability `memory` (no persist calls: survives process
// crashes, not power loss); LMDB in the same folder with
// noSync + noMetaSync + useWritemap, the same durability class.
// Times are the best of 3 runs, in ns per operation.
// BENCH_SCALE=0.1 makes every loop 10x shorter (and the big map 100k keys).
const fs = require('node:fs');
const path = require('node:path');
const os = require('node:os');
const { spawn } = require('node:child_process');
const net = require('node:net');

const REPO = path.resolve(__dirname, '..', '..');
const BUILD = path.resolve(process.env.UNIHEAP_BUILD || path.join(REPO, 'build'));
const PKG = path.join(REPO, 'bindings-node');
const uniheap = require(PKG);
const SCALE = Number(process.env.BENCH_SCALE || 1);

function requireLmdb() {
  try {
    return require(require.resolve('lmdb', { paths: [PKG] }));
  } catch {
    return null;
  }
}

async function startHeapd(dir) {
  const sock = path.join(dir, 'heapd.sock');
  const proc = spawn(path.join(BUILD, 'heapd'), ['--heap', path.join(dir, 'bench.uh'),
    '--socket', sock, '--create', '--size', '3G', '--durability', 'memory'],
  { stdio: 'ignore' });
  for (let i = 0; i < 1000; i++) {
    if (proc.exitCode !== null) throw new Error(`heapd exited with ${proc.exitCode}`);
    const ok = await new Promise((resolve) => {
      const c = net.connect(sock);
      c.on('connect', () => { c.destroy(); resolve(true); });
      c.on('error', () => resolve(false));
    });
    if (ok) return { proc, sock };
    await new Promise((r) => setTimeout(r, 10));
  }
  proc.kill('SIGKILL');
  throw new Error('heapd did not start');
}

/** ns per op of fn(n), best of 3. */
function time(n, fn) {
  let best = Infinity;
  for (let r = 0; r < 3; r++) {
    const t0 = process.hrtime.bigint();
    fn(n);
    const ns = Number(process.hrtime.bigint() - t0) / n;
    best = Math.min(best, ns);
  }
  return best;
}

let sink = 0;

function fieldRows(heap) {
  const Account = heap.defineClass('bench.Account', { balance: 'i64', rate: 'f64' });
  const a = new Account({ balance: 1, rate: 0.5 });
  const plain = { balance: 1, rate: 0.5 };
  const n = Math.max(1000, Math.round(20e6 * SCALE));
  const nset = Math.max(1000, Math.round(1e6 * SCALE));
  const get = time(n, (k) => { let s = 0; for (let i = 0; i < k; i++) s += a.balance; sink += s; });
  const getPlain = time(n, (k) => { let s = 0; for (let i = 0; i < k; i++) s += plain.balance; sink += s; });
  const getF = time(n, (k) => { let s = 0; for (let i = 0; i < k; i++) s += a.rate; sink += s; });
  const set = time(nset, (k) => { for (let i = 0; i < k; i++) a.balance = i; });
  const setPlain = time(n, (k) => { for (let i = 0; i < k; i++) plain.balance = i; sink += plain.balance; });
  const inBlock = time(nset, (k) => {
    heap.atomic(() => { let s = 0; for (let i = 0; i < k; i++) s += a.balance; sink += s; });
  });
  const block = time(nset, (k) => { for (let i = 0; i < k; i++) heap.atomic(() => {}); });
  const block1 = time(nset / 4, (k) => { for (let i = 0; i < k; i++) heap.atomic(() => { a.balance = i; }); });
  return [
    ['field get, i64 (outside a block)', get, getPlain, 'plain JS property'],
    ['field get, f64 (outside a block)', getF, getPlain, 'plain JS property'],
    ['field set, i64 (outside a block)', set, setPlain, 'plain JS property'],
    ['field get, i64 (inside a block)', inBlock, getPlain, 'plain JS property'],
    ['empty block: heap.atomic(() => {})', block, null, ''],
    ['block writing one i64 field', block1, null, ''],
  ];
}

function keysOf(n) {
  return Array.from({ length: n }, (_, i) => `user${i.toString().padStart(10, '0')}`);
}

function randomOrder(n, count) {
  let x = 12345;
  const out = new Uint32Array(count);
  for (let i = 0; i < count; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out[i] = x % n;
  }
  return out;
}

function mapRows(heap, lmdb, dir, nkeys) {
  const keys = keysOf(nkeys);
  const value = Buffer.alloc(100, 0x61);
  const m = new uniheap.PMap(heap);
  for (let i = 0; i < nkeys; i += 200) {	// 200 puts fit the 1 MiB block log
    heap.atomic(() => { for (let j = i; j < Math.min(nkeys, i + 200); j++) m.set(keys[j], value); });
  }
  heap.roots.set(`bench.map.${nkeys}`, m);
  const jsmap = new Map(keys.map((k) => [k, Buffer.from(value)]));
  const order = randomOrder(nkeys, Math.max(1000, Math.round(1e6 * SCALE)));
  const count = order.length;
  const pick = (get) => (k) => {
    let s = 0;
    for (let i = 0; i < k; i++) s += get(keys[order[i]]).length;
    sink += s;
  };
  const rows = [];
  const uh = time(count, pick((k) => m.get(k)));
  const js = time(count, pick((k) => jsmap.get(k)));
  rows.push([`map get, 100-byte value, ${nkeys} keys: PMap`, uh, js, 'JS Map']);
  if (lmdb) {
    const env = lmdb.open({
      path: path.join(dir, `lmdb-${nkeys}`), noSync: true, noMetaSync: true, useWritemap: true,
      mapSize: 4 * 1024 ** 3, compression: false,
    });
    for (let i = 0; i < nkeys; i += 10000) {
      env.transactionSync(() => {
        for (let j = i; j < Math.min(nkeys, i + 10000); j++) env.putSync(keys[j], value);
      });
    }
    const lm = time(count, pick((k) => env.getBinary(k)));
    rows.push([`map get, 100-byte value, ${nkeys} keys: lmdb-js getBinary`, lm, js, 'JS Map']);
    rows.push([`  PMap vs lmdb-js getBinary, ${nkeys} keys`, uh, lm, 'lmdb-js getBinary']);
    env.close();
  }
  jsmap.clear();
  return rows;
}

function print(rows) {
  const w = Math.max(...rows.map((r) => r[0].length));
  for (const [what, ns, peer, peerName] of rows) {
    const ratio = peer ? `  ${(ns / peer).toFixed(2)}x ${peerName} (${peer.toFixed(1)} ns)` : '';
    console.log(`${what.padEnd(w)}  ${ns.toFixed(1).padStart(9)} ns${ratio}`);
  }
}

async function main() {
  const base = fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();
  const dir = fs.mkdtempSync(path.join(base, 'uniheap-bench-node-'));
  const { proc, sock } = await startHeapd(dir);
  let heap;
  try {
    heap = uniheap.connect({ socket: sock });
    const lmdb = requireLmdb();
    console.log(`uniheap Node binding (Node ${process.version}, 1 thread); heap on tmpfs, ` +
      `durability ${heap.info().durability}; LMDB ${lmdb ? 'noSync+noMetaSync+useWritemap' : 'missing (npm install in bindings-node)'}`);
    print(fieldRows(heap));
    for (const n of [100000, Math.round(1e6 * Math.min(1, SCALE * 10))]) print(mapRows(heap, lmdb, dir, n));
  } finally {
    heap?.close();
    proc.kill('SIGTERM');
    await new Promise((r) => proc.on('exit', r));
    fs.rmSync(dir, { recursive: true, force: true });
  }
  if (sink === 42) console.log('');
}

main().catch((e) => {
  console.error(e.stack || String(e));
  process.exit(1);
});
