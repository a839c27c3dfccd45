'use strict';
// YCSB on an in-process Map: the ceiling, what a plain JS Map gives.
//
// A Map from key to record, and a B+ tree of the keys (sorted-btree) for
// scans. Nothing outlives the process and worker_threads share no JS
// objects, so each client thread holds a private copy of the table and
// draws its keys from counters of its own, as if it were the only client.
// A transaction run (-t) loads its table itself in init(), before
// the clock starts, through the workload's own insert path (the keys and
// values a load would write); memory.preload=false turns that off.

const BTree = require('sorted-btree').default;
const { Counter, AcknowledgedCounter } = require('../counters');
const { DB, STATUS } = require('../db');
const { Measurements } = require('../measurements');
const { Random } = require('../random');

function pick(rec, fields) {
  if (fields === null) return { ...rec };
  const out = {};
  for (const f of fields) if (f in rec) out[f] = rec[f];
  return out;
}

class MemoryDB extends DB {
  init() {
    this.tables = new Map();
    const run = String(this.props.dotransactions ?? 'true').toLowerCase() !== 'false';
    if (run && String(this.props['memory.preload'] ?? 'true').toLowerCase() === 'true') this.preload();
  }

  preload() {
    // Required here: workload.js requires the backends through thread.js.
    const { CoreWorkload, intProp, recordCount } = require('../workload');
    const n = recordCount(this.props);
    const start = intProp(this.props, 'insertstart', '0');
    const wl = new CoreWorkload(this.props, new Random(), new Counter(start), new AcknowledgedCounter(n),
      new Measurements());
    const count = intProp(this.props, 'insertcount', String(n - start));
    for (let i = 0; i < count; i++) wl.doInsert(this);
  }

  table(name) {
    let t = this.tables.get(name);
    if (t === undefined) this.tables.set(name, t = { records: new Map(), keys: new BTree() });
    return t;
  }

  read(table, key, fields) {
    const rec = this.table(table).records.get(key);
    return rec === undefined ? [STATUS.NOT_FOUND, null] : [STATUS.OK, pick(rec, fields)];
  }

  scan(table, start, count, fields) {
    const { records, keys } = this.table(table);
    const out = [];
    for (const k of keys.keys(start)) {
      if (out.length >= count) break;
      out.push(pick(records.get(k), fields));
    }
    return [STATUS.OK, out];
  }

  update(table, key, values) {
    const rec = this.table(table).records.get(key);
    if (rec === undefined) return STATUS.NOT_FOUND;
    Object.assign(rec, values);
    return STATUS.OK;
  }

  insert(table, key, values) {
    const t = this.table(table);
    t.records.set(key, { ...values });
    t.keys.set(key, true);
    return STATUS.OK;
  }

  delete(table, key) {
    const t = this.table(table);
    if (!t.records.delete(key)) return STATUS.NOT_FOUND;
    t.keys.delete(key);
    return STATUS.OK;
  }
}

// Each client thread its own table, and so its own key counters.
MemoryDB.privateTables = true;

module.exports = MemoryDB;
