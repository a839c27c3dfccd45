'use strict';
// What the bank workers and the tests that start them share: the account
// class (the same name and layout as the Python tests' t.bank.Account),
// the root, and fixed-size acknowledgement records.
const fs = require('node:fs');
const uniheap = require('../..');

const ROOT = 't.bank.accounts';
const RECORD_LEN = 64;	// divides the page size: a SIGKILL never tears a record

class Account extends uniheap.PObject {
  static className = 't.bank.Account';
  static fields = { balance: 'i64', owner: 'string' };
}

/** n accounts with `initial` each, published under ROOT in one block. */
function createAccounts(heap, n, initial) {
  return heap.atomic(() => {
    const accts = Array.from({ length: n }, (_, i) =>
      new Account(heap, { balance: initial, owner: `acct${i}` }));
    heap.roots.set(ROOT, new uniheap.PList(heap, accts));
    return accts;
  });
}

function accounts(heap) {
  return heap.roots.get(ROOT).toArray();
}

function recordAppend(fd, text) {
  const b = Buffer.alloc(RECORD_LEN, ' ');
  if (b.write(text) >= RECORD_LEN) throw new Error(`record too long: ${text}`);
  b[RECORD_LEN - 1] = 10;
  if (fs.writeSync(fd, b) !== RECORD_LEN) throw new Error('short write of an ack record');
}

function readRecords(path) {
  const data = fs.readFileSync(path);
  if (data.length % RECORD_LEN) throw new Error(`${path}: torn record`);
  const out = [];
  for (let i = 0; i < data.length; i += RECORD_LEN) {
    out.push(data.subarray(i, i + RECORD_LEN).toString().trim().split(/\s+/));
  }
  return out;
}

/** One transfer, no overdraft; 1 if it moved money. */
function transfer(accts, src, dst, amount) {
  const s = accts[src];
  const d = accts[dst];
  if (s.balance < amount) return 0;
  s.balance -= amount;
  d.balance += amount;
  return 1;
}

module.exports = { ROOT, Account, createAccounts, accounts, recordAppend, readRecords, transfer };
