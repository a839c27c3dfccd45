'use strict';
// Several Node processes and worker threads on one heap: a bank under
// contention, checked against an oracle of acknowledged transfers (every
// acknowledged transfer is in the final balances, nothing else is) and its
// constant total; a process SIGKILLed inside a block is rolled back by
// heapd while the others go on.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { HeapD, useHeap, WORKERS, spawnNode, finished, stopProcess, tempDir } = require('./helpers');
const { createAccounts, accounts, readRecords } = require('./workers/bankdefs');

const NACCOUNTS = 8;
const INITIAL = 1000;
const TRANSFERS = 1500;

const d = new HeapD();
let heap;
let dir;
useHeap(d, (h) => {
  heap = h;
  dir = tempDir();
}, () => fs.rmSync(dir, { recursive: true, force: true }));

/** Apply the acknowledged transfers of records to balances. */
function replay(records, balances) {
  let moved = 0;
  for (const r of records) {
    if (r[0] === 'A' && r[6] === '1') {
      balances[Number(r[3])] -= Number(r[5]);
      balances[Number(r[4])] += Number(r[5]);
      moved++;
    }
  }
  return moved;
}

test('bank transfers from processes and worker threads: total constant, acks present', async () => {
  createAccounts(heap, NACCOUNTS, INITIAL);
  const go = path.join(dir, 'go');
  const ack = (wid) => path.join(dir, `ack${wid}`);
  const procs = [
    spawnNode(path.join(WORKERS, 'bank_worker.js'), [0, TRANSFERS, ack(0), 11, 'fn', go], d),
    spawnNode(path.join(WORKERS, 'bank_worker.js'), [1, TRANSFERS, ack(1), 12, 'explicit', go], d),
    spawnNode(path.join(WORKERS, 'bank_threads.js'), [2, 2, TRANSFERS, path.join(dir, 'ack'), 13, go], d),
  ];
  const done = procs.map(finished);
  fs.writeFileSync(go, '');
  let results;
  try {
    results = await Promise.all(done);
  } finally {
    await Promise.all(procs.map((p) => stopProcess(p)));
  }
  for (const r of results) assert.equal(r.code, 0, r.stderr);
  const balances = new Array(NACCOUNTS).fill(INITIAL);
  let moved = 0;
  for (let wid = 0; wid < 4; wid++) {
    const recs = readRecords(ack(wid));
    assert.equal(recs.filter((r) => r[0] === 'A').length, TRANSFERS, `worker ${wid}`);
    moved += replay(recs, balances);
  }
  assert.ok(moved > 0);
  const accts = accounts(heap);
  assert.deepEqual(accts.map((a) => a.balance), balances);
  assert.equal(balances.reduce((a, b) => a + b, 0), NACCOUNTS * INITIAL);
});

test('a process SIGKILLed inside a block is rolled back; the others go on', async () => {
  const accts = accounts(heap);
  const before = accts.map((a) => a.balance);
  const owner1 = accts[1].owner;
  const child = spawnNode(path.join(WORKERS, 'crash_in_block.js'), [500], d);
  const out = finished(child);
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (b) => { if (String(b).includes('in-block')) resolve(); });
    child.on('exit', () => reject(new Error('the child ended before its block')));
  });
  // While the child holds account 0 locked, a block of ours touching it
  // fails (after libuniheap's bounded wait), one on other accounts commits.
  heap.atomic(() => { accts[2].balance += 0; });
  child.kill('SIGKILL');
  const r = await out;
  assert.equal(r.signal, 'SIGKILL');
  // heapd reaps the session: the lock goes, the write is rolled back.
  heap.maxTries = 100000;
  heap.atomic(() => {
    accts[0].balance -= 1;
    accts[3].balance += 1;
  });
  heap.maxTries = 100;
  assert.equal(accts[0].balance, before[0] - 1);
  assert.equal(accts[1].owner, owner1);
  const total = accts.reduce((s, a) => s + a.balance, 0);
  assert.equal(total, NACCOUNTS * INITIAL);
});
