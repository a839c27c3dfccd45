'use strict';
// The client: what site.ycsb.Client does, for the Node port.
//
//   node bench/ycsb/node/bin/ycsb.js -load|-t -db uniheap -P workloads/workloada \
//        -p recordcount=1000 -threads 2 -s
//
// Client threads are worker_threads (thread.js), one DB connection each;
// the key counters they share live in SharedArrayBuffers. The clock starts
// once every worker has connected and built its workload, and stops when
// the last one has done its share; the report merges their measurements.

const path = require('node:path');
const { Worker } = require('node:worker_threads');
const { Measurements, reportLines, parsePercentiles } = require('./measurements');
const { UsageError, parseCommandLine } = require('./properties');
const { privateTables } = require('./backends');
const { makeCounters } = require('./workload');

const USAGE = `usage: node bench/ycsb/node/bin/ycsb.js [options]
  -threads n       client threads (worker_threads), default 1 (property threadcount)
  -target n        aim at n operations per second in total (property target)
  -load            run the load phase
  -t               run the transaction phase (default)
  -db name         uniheap, lmdb, memory, redis, or a module path (property db)
  -P file          a workload properties file; several are read in order
  -p name=value    a property, over those of the files
  -s               print status to stderr every status.interval seconds (10)
  -l label         a label for the status lines`;

function opCount(p) {
  if (String(p.dotransactions ?? 'true').toLowerCase() !== 'false') return parseInt(p.operationcount ?? '0', 10);
  if ('insertcount' in p) return parseInt(p.insertcount, 10);
  return parseInt(p.recordcount ?? '0', 10);
}

function remaining(seconds) {
  const s = Math.trunc(seconds);
  if (s >= 3600) return `${Math.trunc(s / 3600)} hours ${Math.trunc((s % 3600) / 60)} minutes`;
  if (s >= 60) return `${Math.trunc(s / 60)} minutes`;
  return `${s} seconds`;
}

function stamp() {
  const d = new Date();
  const p = (n, w = 2) => String(n).padStart(w, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}:${p(d.getMilliseconds(), 3)}`;
}

/** The Java client's status line every interval seconds. */
function startStatus(p, total, readProgress) {
  if (String(p.status ?? 'false').toLowerCase() !== 'true') return null;
  const interval = parseFloat(p['status.interval'] ?? '10') * 1000;
  const start = performance.now();
  let lastT = start;
  let lastOps = 0;
  return setInterval(() => {
    const now = performance.now();
    const ops = readProgress();
    let msg = `${p.label ?? ''}${stamp()} ${Math.trunc((now - start) / 1000)} sec: ${ops} operations; `;
    if (ops) msg += `${((ops - lastOps) * 1000 / (now - lastT)).toFixed(2)} current ops/sec; `;
    if (total && ops) msg += `est completion in ${remaining((total - ops) * (now - start) / 1000 / ops)}`;
    process.stderr.write(msg + '\n');
    lastT = now;
    lastOps = ops;
  }, interval);
}

/** Wait for one message of kind from every worker; rejects with the first
 *  error a worker reports, or if one exits first. */
function expectAll(workers, kind) {
  return Promise.all(workers.map((w, i) => new Promise((resolve, reject) => {
    const onMessage = (msg) => {
      if (msg.kind === kind) { cleanup(); resolve(msg); } else if (msg.kind === 'error') {
        cleanup();
        reject(new Error(`client thread ${i} failed:\n${msg.error}`));
      }
    };
    const onExit = (code) => {
      cleanup();
      reject(new Error(`client thread ${i} exited with status ${code} before it said ${kind}`));
    };
    const onError = (e) => { cleanup(); reject(e); };
    function cleanup() {
      w.off('message', onMessage);
      w.off('exit', onExit);
      w.off('error', onError);
    }
    w.on('message', onMessage);
    w.on('exit', onExit);
    w.on('error', onError);
  })));
}

async function main(argv) {
  process.stderr.write(`Command line: ${argv.join(' ')}\n`);
  let p;
  let threads;
  let total;
  try {
    p = parseCommandLine(argv);
    threads = parseInt(p.threadcount ?? '1', 10);
    total = opCount(p);
    if (!Number.isFinite(threads) || threads < 1) throw new UsageError(`threadcount=${p.threadcount}: give 1 or more`);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`${USAGE}\nycsb: ${e.message}\n`);
    return 2;
  }
  if (total && threads > total) {
    threads = total;
    process.stdout.write('Warning: the threadcount is bigger than recordcount, the threadcount will be recordcount!\n');
  }
  process.stderr.write(`YCSB Node port (CoreWorkload of 0.17.0), db=${p.db ?? 'uniheap'}, threads=${threads}, pid ${process.pid}\nStarting test.\n`);
  // A binding whose every thread keeps a private table (the in-process Map)
  // gets private counters too: a key another thread inserted would not be
  // in this thread's table.
  const counters = privateTables(p.db ?? 'uniheap') ? null : makeCounters(p, true).map((c) => c.shared());
  const progress = new Int32Array(new SharedArrayBuffer(4 * threads));
  const workers = [];
  const exited = [];
  for (let i = 0; i < threads; i++) {
    const w = new Worker(path.join(__dirname, 'thread.js'), {
      workerData: { index: i, threads, props: p, counters, progress: progress.buffer },
    });
    exited.push(new Promise((resolve) => w.once('exit', resolve)));
    workers.push(w);
  }
  let failed = false;
  let results = [];
  let st = 0;
  let en = 0;
  let status = null;
  try {
    await expectAll(workers, 'ready');
    status = startStatus(p, total, () => progress.reduce((a, b) => a + b, 0));
    st = performance.now();
    for (const w of workers) w.postMessage('start');
    results = await expectAll(workers, 'done');
    en = performance.now();
  } catch (e) {
    process.stderr.write(`${e.message}\n`);
    failed = true;
    for (const w of workers) w.postMessage('abort');
    st = en = performance.now();
  } finally {
    if (status) clearInterval(status);
  }
  const exits = await Promise.all(exited);
  if (exits.some((c) => c !== 0)) failed = true;
  const m = new Measurements();
  let opsdone = 0;
  for (const r of results) {
    opsdone += r.opsdone;
    m.merge(r.measurements);
  }
  const lines = reportLines(m, Math.trunc(en - st), opsdone, parsePercentiles(p['hdrhistogram.percentiles'] ?? '95,99'));
  process.stdout.write(lines.join('\n') + '\n');
  return failed ? 1 : 0;
}

module.exports = { main, opCount };
