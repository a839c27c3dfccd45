'use strict';
// The uniheap backend reads a whole record with no block (a lookup, then
// rec.$fields()); a record replaced (and so freed) between the two is read
// again in a block, which finds the new one. Runs on a private heapd
// (bindings-node's test helpers).

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');

const helpers = require(path.join(__dirname, '..', '..', '..', '..', 'bindings-node', 'test', 'helpers'));
const UniheapDB = require('../lib/backends/uniheap');
const { STATUS } = require('../lib/db');

const d = new helpers.HeapD();
helpers.useHeap(d, () => {});

function record(byte) {
  const r = {};
  for (let i = 0; i < 10; i++) r[`field${i}`] = Buffer.alloc(10, byte);
  return r;
}

test('a whole-record read with no block falls back to a block when the record is replaced', () => {
  const db = new UniheapDB({ 'uniheap.socket': d.sock });
  db.init();
  try {
    const old = record('o');
    const now = record('n');
    assert.equal(db.insert('usertable', 'user1', old), STATUS.OK);
    assert.deepEqual(db.read('usertable', 'user1', null), [STATUS.OK, old]);
    assert.deepEqual(db.read('usertable', 'nobody', null), [STATUS.NOT_FOUND, null]);
    const calls = [];
    const whole = db.whole;
    db.whole = (rec) => {	// another client replaces the record in between
      calls.push(rec);
      if (calls.length === 1) db.insert('usertable', 'user1', now);
      return whole(rec);
    };
    assert.deepEqual(db.read('usertable', 'user1', null), [STATUS.OK, now]);
    assert.equal(calls.length, 1, 'the second read ran in a block');
    db.whole = whole;
    assert.deepEqual(db.read('usertable', 'user1', ['field3']),
      [STATUS.OK, { field3: Buffer.alloc(10, 'n') }]);
    assert.deepEqual(db.read('usertable', 'user1', null), [STATUS.OK, now]);
  } finally {
    db.cleanup();
  }
});
