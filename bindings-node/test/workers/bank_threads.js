'use strict';
// A process running bank_worker.js in NTHREADS worker threads (each its own
// session over this process's one mapping). Usage: bank_threads.js NTHREADS
// WID0 COUNT ACKPREFIX SEED GOFILE: thread i is worker WID0 + i, writing
// ACKPREFIX<wid>.
const path = require('node:path');
const { Worker } = require('node:worker_threads');

const [nthreads, wid0, count, prefix, seed, gofile] = process.argv.slice(2);
const runs = [];
for (let i = 0; i < Number(nthreads); i++) {
  const wid = Number(wid0) + i;
  const w = new Worker(path.join(__dirname, 'bank_worker.js'), {
    workerData: [wid, count, `${prefix}${wid}`, Number(seed) + i, i % 2 ? 'explicit' : 'fn', gofile],
  });
  runs.push(new Promise((resolve, reject) => {
    w.on('message', (m) => console.log(m));
    w.on('error', reject);
    w.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`thread ${wid} exit ${code}`))));
  }));
}
Promise.all(runs).catch((e) => {
  console.error(e.stack || String(e));
  process.exitCode = 1;
});
