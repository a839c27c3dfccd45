'use strict';
// A client with no reconnect logic, for the heapd restart test
// (bindings-python/tests/test_heapd_restart.py): the Node twin of
// tests/c/prog_restart_worker.c, same roots, same ops, same output.
// Usage: restart_worker.js NAME ACKFILE STOPFILE ($UNIHEAP_SOCKET set).
const fs = require('node:fs');
const uniheap = require('../..');

function sleepMs(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function main([name, ackpath, stop]) {
  const heap = uniheap.connect();
  const root = `rs.${name}`;
  heap.atomic(() => {
    if (!heap.roots.has(root)) heap.roots.set(root, new uniheap.PList(heap));
    if (!heap.roots.has('rs.count')) heap.roots.set('rs.count', new uniheap.PArray(heap, 'i64', 1));
  });
  const items = heap.roots.get(root);
  const count = heap.roots.get('rs.count');
  const fd = fs.openSync(ackpath, 'a');
  let i = 0;
  let longest = 0;
  while (!fs.existsSync(stop)) {
    i++;
    const before = heap.stats().reattaches;
    const t0 = process.hrtime.bigint();
    heap.atomic(() => {
      if (items.length !== i - 1) throw new Error(`the list has ${items.length} elements before op ${i}`);
      items.push(i);
      count.set(0, count.at(0) + 1);
    });
    const st = heap.stats();
    if (st.reattaches !== before) longest = Math.max(longest, Number(process.hrtime.bigint() - t0) / 1e6);
    fs.writeSync(fd, `${i} ${st.reattaches}\n`);
    sleepMs(1);
  }
  const st = heap.stats();
  console.log(`ops=${i} reattaches=${st.reattaches} reattach_ms_max=${longest.toFixed(1)} ` +
    `reattach_ms_total=${(st.reattachNs / 1e6).toFixed(1)}`);
  heap.close();
}

main(process.argv.slice(2));
