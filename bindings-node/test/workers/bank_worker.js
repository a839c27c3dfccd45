'use strict';
// A bank worker: COUNT transfers between the accounts under bankdefs.ROOT,
// each acknowledged in ACKFILE ("I wid seq src dst amount" before the
// block, "A ... moved" after its commit). MODE "fn": heap.atomic(fn)
// retries; "explicit": begin/commit, retried here on ConflictError. Waits
// for GOFILE before the first transfer. Runs as a process (argv) or as a
// worker thread (workerData: the same arguments). The socket comes from
// $UNIHEAP_SOCKET.
const fs = require('node:fs');
const { isMainThread, workerData, parentPort } = require('node:worker_threads');
const uniheap = require('../..');
const { accounts, recordAppend, transfer } = require('./bankdefs');

function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function main([wid, count, ackpath, seed, mode, gofile]) {
  const r = rng(Number(seed));
  const fd = fs.openSync(ackpath, 'a');
  const heap = uniheap.connect();
  heap.maxTries = 1000000;
  const accts = accounts(heap);
  const n = accts.length;
  const end = Date.now() + 30000;
  while (!fs.existsSync(gofile) && Date.now() < end) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2);
  let caught = 0;
  for (let seq = 0; seq < Number(count); seq++) {
    const src = Math.floor(r() * n);
    const dst = (src + 1 + Math.floor(r() * (n - 1))) % n;
    const amount = 1 + Math.floor(r() * 50);
    recordAppend(fd, `I ${wid} ${seq} ${src} ${dst} ${amount}`);
    let moved;
    if (mode === 'fn') {
      moved = heap.atomic(() => transfer(accts, src, dst, amount));
    } else {
      for (;;) {
        try {
          heap.begin();
          moved = transfer(accts, src, dst, amount);
          heap.commit();
          break;
        } catch (e) {
          if (heap.inBlock) heap.abort();
          if (!(e instanceof uniheap.ConflictError)) throw e;
          caught++;
        }
      }
    }
    recordAppend(fd, `A ${wid} ${seq} ${src} ${dst} ${amount} ${moved}`);
  }
  const st = heap.stats();
  heap.close();
  fs.closeSync(fd);
  return `worker ${wid}: ${count} transfers, ${caught} conflicts caught, ${st.retries} retries`;
}

if (isMainThread) {
  console.log(main(process.argv.slice(2)));
} else {
  parentPort.postMessage(main(workerData));
}
