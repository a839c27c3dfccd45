'use strict';
// The uniheap backend's operations on ycsb.Record tables: a read is one
// native call (map.getFields), a one-field update one (map.setField), a
// scan a batch of records per call (map.rangeFields) in a block; each
// answers as YCSB expects (status and cells). Runs on a private heapd
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

function withDB(props, body) {
  const db = new UniheapDB({ 'uniheap.socket': d.sock, ...props });
  db.init();
  try {
    body(db);
  } finally {
    db.cleanup();
  }
}

test('reads, updates, scans and deletes of ycsb.Record tables', () => {
  withDB({}, (db) => {
    const old = record('o');
    assert.equal(db.insert('usertable', 'user1', old), STATUS.OK);
    assert.deepEqual(db.read('usertable', 'user1', null), [STATUS.OK, old]);
    assert.deepEqual(db.read('usertable', 'nobody', null), [STATUS.NOT_FOUND, null]);
    assert.deepEqual(db.read('usertable', 'user1', ['field3', 'field7']),
      [STATUS.OK, { field3: old.field3, field7: old.field7 }]);
    const now = record('n');
    assert.equal(db.insert('usertable', 'user1', now), STATUS.OK, 'a new record for the key');
    assert.deepEqual(db.read('usertable', 'user1', null), [STATUS.OK, now]);

    assert.equal(db.update('usertable', 'user1', { field2: Buffer.from('two') }), STATUS.OK);
    assert.equal(db.update('usertable', 'user1', { field4: Buffer.from('4'), field5: Buffer.from('5') }),
      STATUS.OK);
    assert.equal(db.update('usertable', 'nobody', { field2: Buffer.from('x') }), STATUS.NOT_FOUND);
    assert.equal(db.update('usertable', 'nobody', { field2: Buffer.from('x'), field3: Buffer.from('y') }),
      STATUS.NOT_FOUND);
    const [, cells] = db.read('usertable', 'user1', null);
    assert.deepEqual(cells, { ...now, field2: Buffer.from('two'), field4: Buffer.from('4'), field5: Buffer.from('5') });

    for (let i = 2; i < 60; i++) db.insert('usertable', `user${String(i).padStart(2, '0')}`, record(String(i % 10)));
    const [st, rows] = db.scan('usertable', 'user10', 40, null);
    assert.equal(st, STATUS.OK);
    assert.equal(rows.length, 40, 'across several native calls');
    assert.deepEqual(rows[0], record('0'));
    assert.deepEqual(rows[39], record('9'));
    assert.deepEqual(db.scan('usertable', 'user58', 5, ['field1']),
      [STATUS.OK, [{ field1: Buffer.alloc(10, '8') }, { field1: Buffer.alloc(10, '9') }]]);
    assert.deepEqual(db.scan('usertable', 'zzz', 5, null), [STATUS.OK, []]);

    assert.equal(db.delete('usertable', 'user1'), STATUS.OK);
    assert.equal(db.delete('usertable', 'user1'), STATUS.NOT_FOUND);
    assert.deepEqual(db.read('usertable', 'user1', null), [STATUS.NOT_FOUND, null]);
  });
});

test('tables of other fields keep records as maps', () => {
  withDB({ fieldcount: '2' }, (db) => {
    const r = { field0: Buffer.from('a'), field1: Buffer.from('b') };
    assert.equal(db.insert('maptable', 'k1', r), STATUS.OK);
    assert.equal(db.insert('maptable', 'k2', r), STATUS.OK);
    assert.deepEqual(db.read('maptable', 'k1', null), [STATUS.OK, r]);
    assert.equal(db.update('maptable', 'k1', { field1: Buffer.from('c') }), STATUS.OK);
    assert.deepEqual(db.read('maptable', 'k1', ['field1']), [STATUS.OK, { field1: Buffer.from('c') }]);
    assert.deepEqual(db.scan('maptable', 'k1', 5, ['field0']),
      [STATUS.OK, [{ field0: Buffer.from('a') }, { field0: Buffer.from('a') }]]);
    assert.equal(db.update('maptable', 'nobody', { field1: Buffer.from('c') }), STATUS.NOT_FOUND);
  });
});
