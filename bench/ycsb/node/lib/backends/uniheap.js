'use strict';
// YCSB on uniheap, from Node (bindings-node).
//
// The schema every language uses (bench/ycsb/README.md, "One table, every
// language"): table T is a persistent sorted map with string keys under the
// root "ycsb.T"; a record is an object of class ycsb.Record with inline
// bytes fields field0..field9 of capacity 100 (the values live in the
// record: one object per record) when the workload has YCSB's default
// fields and lengths, and a PMap (string -> bytes) per record otherwise.
//
// A ycsb.Record is read with no block, with one native call: the lookup
// and the copy of the whole record at one instant (t.getFields(key); a
// record replaced under the copy is looked up again in libuniheap), the
// fields asked for picked from it; an update of one field is one native
// call too (t.setField(key, field, value): the lookup and the write,
// atomic and durable on their own, re-run by libuniheap after a lost
// conflict), several fields' in a block; a scan reads up to 32 records per
// native call (t.rangeFields) in a block (one snapshot). An insert of a
// ycsb.Record is one native call too (t.putRecord: the new record, its
// fields and the put in one atomic step, the record it replaces freed),
// redone in a block if it loses a conflict. Records as maps read in a
// block. Other inserts and deletes are blocks, which heap.atomic() re-runs
// after a lost conflict. Each client thread (worker) has its own session.

const path = require('node:path');
const { DB, DBError, STATUS } = require('../db');

const REPO = path.resolve(__dirname, '..', '..', '..', '..', '..');
const ROOT_PREFIX = 'ycsb.';
const RECORD_FIELDS = Array.from({ length: 10 }, (_, i) => `field${i}`);
// The capacity of ycsb.Record's inline fields: YCSB's default fieldlength.
const FIELD_MAX = 100;

/** The uniheap package: $UNIHEAP_NODE, else the checkout's bindings-node. */
function loadBinding() {
  const where = process.env.UNIHEAP_NODE || path.join(REPO, 'bindings-node');
  try {
    return require(where);
  } catch (e) {
    throw new DBError(`uniheap: cannot load the Node binding from ${where} (${e.message}); build it with make node`);
  }
}

function usesRecordClass(p) {
  return String(p.fieldcount ?? '10') === '10' && (p.fieldnameprefix ?? 'field') === 'field' &&
    Number(p.fieldlength ?? FIELD_MAX) <= FIELD_MAX;
}

/** Records as ycsb.Record objects, read and written through their key. */
class RecordSchema {
  constructor(heap) {
    this.heap = heap;
    const fields = {};
    for (const f of RECORD_FIELDS) fields[f] = `bytes:${FIELD_MAX}`;	// inline
    this.Record = heap.defineClass('ycsb.Record', fields);
  }

  create(values) {
    return new this.Record(values);
  }

  /** A new record under key, the one it replaces freed: one call. */
  putKey(t, key, values) {
    t.putRecord(key, this.Record, values, true);
  }

  /** The fields of key's record, or null when there is none: one call. */
  readKey(t, key, fields) {
    const all = t.getFields(key);
    if (all === undefined) return null;
    return fields === null ? all : pick(all, fields);
  }

  /** The fields of up to count records from key start on. */
  scanKeys(t, start, count, fields) {
    return t.rangeFields(start, undefined, { limit: count })
      .map(([, all]) => (fields === null ? all : pick(all, fields)));
  }

  /** Write values into key's record; false when there is none. One call
   * per field (in the caller's block when there are several). */
  updateKey(t, key, values) {
    for (const f in values) {
      if (!t.setField(key, f, values[f])) return false;
    }
    return true;
  }

  free(rec) {
    this.heap.free(rec);	// its values are inside it
  }
}

function pick(all, fields) {
  const out = {};
  for (const f of fields) if (f in all) out[f] = all[f];
  return out;
}

/** Records as one PMap (field name -> bytes) each, read in blocks. */
class MapSchema {
  constructor(heap, uniheap) {
    this.heap = heap;
    this.uniheap = uniheap;
  }

  create(values) {
    return new this.uniheap.PMap(this.heap, Object.entries(values));
  }

  read(rec, fields) {
    const out = {};
    if (fields === null) {
      for (const [k, v] of rec.entries()) out[k] = v;
    } else {
      for (const f of fields) {
        const v = rec.get(f);
        if (v !== undefined) out[f] = v;
      }
    }
    return out;
  }

  readKey(t, key, fields) {
    return this.heap.atomic(() => {
      const rec = t.get(key);
      return rec === undefined ? null : this.read(rec, fields);
    });
  }

  scanKeys(t, start, count, fields) {
    return this.heap.atomic(() => {
      const out = [];
      for (const [, rec] of t.range(start, undefined)) {
        if (out.length >= count) break;
        out.push(this.read(rec, fields));
      }
      return out;
    });
  }

  updateKey(t, key, values) {
    const rec = t.get(key);
    if (rec === undefined) return false;
    for (const f in values) rec.set(f, values[f]);
    return true;
  }

  free(rec) {
    rec.clear();
    this.heap.free(rec);
  }
}

class UniheapDB extends DB {
  init() {
    this.uniheap = loadBinding();
    try {
      this.heap = this.uniheap.connect({ socket: this.props['uniheap.socket'] || null });
    } catch (e) {
      throw new DBError(`uniheap: cannot connect to heapd (${e.message}); start heapd and set UNIHEAP_SOCKET or -p uniheap.socket=PATH`);
    }
    this.records = usesRecordClass(this.props);
    this.schema = this.records ? new RecordSchema(this.heap) : new MapSchema(this.heap, this.uniheap);
    this.tables = new Map();
  }

  cleanup() {
    if (this.heap) this.heap.close();
  }

  /** The sorted map of table name, created (once, atomically) if the heap
   *  has none yet. */
  table(name) {
    let t = this.tables.get(name);
    if (t === undefined) {
      const root = ROOT_PREFIX + name;
      t = this.heap.atomic(() => {
        let m = this.heap.roots.get(root);
        if (m === undefined) {
          m = new this.uniheap.PSortedMap(this.heap);
          this.heap.roots.set(root, m);
        }
        return m;
      });
      this.tables.set(name, t);
    }
    return t;
  }

  read(table, key, fields) {
    const cells = this.schema.readKey(this.table(table), key, fields);
    return cells === null ? [STATUS.NOT_FOUND, null] : [STATUS.OK, cells];
  }

  scan(table, start, count, fields) {
    const t = this.table(table);
    if (count <= 0) return [STATUS.OK, []];
    // one snapshot of the records scanned
    return [STATUS.OK, this.heap.atomic(() => this.schema.scanKeys(t, start, count, fields))];
  }

  update(table, key, values) {
    const t = this.table(table);
    const write = () => (this.schema.updateKey(t, key, values) ? STATUS.OK : STATUS.NOT_FOUND);
    // One field of a ycsb.Record: one call, atomic and durable alone.
    if (this.records && Object.keys(values).length === 1) return write();
    return this.heap.atomic(write);
  }

  insert(table, key, values) {
    const t = this.table(table);
    if (this.records) {
      try {
        this.schema.putKey(t, key, values);	// atomic and durable alone
        return STATUS.OK;
      } catch (e) {
        if (!(e instanceof this.uniheap.ConflictError)) throw e;
      }
      this.heap.atomic(() => this.schema.putKey(t, key, values));	// re-run until it commits
      return STATUS.OK;
    }
    return this.heap.atomic(() => {
      const old = t.get(key);
      t.set(key, this.schema.create(values));
      if (old !== undefined) this.schema.free(old);
      return STATUS.OK;
    });
  }

  delete(table, key) {
    const t = this.table(table);
    return this.heap.atomic(() => {
      const rec = t.take(key);
      if (rec === undefined) return STATUS.NOT_FOUND;
      this.schema.free(rec);
      return STATUS.OK;
    });
  }
}

module.exports = UniheapDB;
