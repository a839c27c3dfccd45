'use strict';
// One client thread (a worker_thread): connects its DB, builds its
// workload, says ready, runs its share when told to start, and posts its
// measurements back.

const { parentPort, workerData } = require('node:worker_threads');
const { makeDB } = require('./backends');
const { DBWrapper } = require('./db');
const { Measurements } = require('./measurements');
const { Random } = require('./random');
const { CoreWorkload, attachCounters, intProp, makeCounters } = require('./workload');
const { opCount } = require('./client');

const PROGRESS_EVERY = 256;       // ops between progress updates and clock checks

const sleeper = new Int32Array(new SharedArrayBuffer(4));

function sleepUntil(deadline) {
  for (let left = deadline - performance.now(); left > 0; left = deadline - performance.now()) {
    Atomics.wait(sleeper, 0, 0, left);
  }
}

async function run(step, db, opcount, p, progress, index, threads) {
  const target = intProp(p, 'target', '0');
  const tickMs = target > 0 ? 1000 * threads / target : 0;
  const maxMs = intProp(p, 'maxexecutiontime', '0') * 1000;
  const start = performance.now();
  let done = 0;
  while (opcount === 0 || done < opcount) {
    let ok = step(db);
    if (ok instanceof Promise) ok = await ok;
    if (ok === false) break;
    done++;
    if (tickMs) sleepUntil(start + done * tickMs);
    if (done % PROGRESS_EVERY === 0) {
      Atomics.store(progress, index, done);
      if (maxMs && performance.now() - start >= maxMs) break;
    }
  }
  Atomics.store(progress, index, done);
  return done;
}

async function main() {
  const { index, threads, props: p, counters, progress: buffer } = workerData;
  const progress = new Int32Array(buffer);
  const measurements = new Measurements();
  let db;
  let step;
  let opcount;
  let dbw;
  try {
    const rng = new Random(p.seed === undefined ? undefined : `${p.seed}:${index}`);
    const all = opCount(p);
    opcount = Math.trunc(all / threads) + (index < all % threads ? 1 : 0);
    db = makeDB(p);
    await db.init();
    dbw = new DBWrapper(db, measurements);
    const [keys, inserts] = counters ? attachCounters(counters) : makeCounters(p, false);
    const wl = new CoreWorkload(p, rng, keys, inserts, measurements);
    const transactions = String(p.dotransactions ?? 'true').toLowerCase() !== 'false';
    step = transactions ? (d) => wl.doTransaction(d) : (d) => wl.doInsert(d);
  } catch (e) {
    parentPort.postMessage({ kind: 'error', error: e.stack || String(e) });
    if (db) await db.cleanup();
    process.exitCode = 1;
    return;
  }
  parentPort.postMessage({ kind: 'ready' });
  const order = await new Promise((resolve) => parentPort.once('message', resolve));
  if (order !== 'start') {
    await db.cleanup();
    process.exitCode = 1;
    return;
  }
  try {
    const opsdone = await run(step, dbw, opcount, p, progress, index, threads);
    parentPort.postMessage({ kind: 'done', opsdone, measurements: measurements.toJSON() });
  } catch (e) {
    parentPort.postMessage({ kind: 'error', error: e.stack || String(e) });
    process.exitCode = 1;
  }
  await db.cleanup();
}

main();
