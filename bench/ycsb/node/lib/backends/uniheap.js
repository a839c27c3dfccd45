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
// A read of a whole ycsb.Record takes no block: a lookup, then
// rec.$fields(), every field at one instant; a record freed in between
// (another client gave the key a new record) is read again in a block.
// Other reads and scans run in a block (one snapshot of a record); an update of
// one field is a single field write (atomic and durable on its own; redone
// as a block if it loses a conflict with another client); inserts,
// multi-field updates and deletes are blocks, which heap.atomic() re-runs
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

/** Records as ycsb.Record objects. */
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

  read(rec, fields) {
    const out = {};
    for (const f of fields ?? RECORD_FIELDS) out[f] = rec[f];
    return out;
  }

  update(rec, values) {
    for (const f in values) rec[f] = values[f];
  }

  free(rec) {
    this.heap.free(rec);	// its values are inside it
  }
}

/** Records as one PMap (field name -> bytes) each. */
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

  update(rec, values) {
    for (const f in values) rec.set(f, values[f]);
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
    const records = usesRecordClass(this.props);
    this.schema = records ? new RecordSchema(this.heap) : new MapSchema(this.heap, this.uniheap);
    /** A whole record read with no block, or null: in a block only. */
    this.whole = records ? (rec) => rec.$fields() : null;
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
    const t = this.table(table);
    let cells;
    if (fields === null && this.whole !== null) {
      // No block: a lookup, then the whole record at one instant. A
      // record is freed only with the change that gives its key another
      // record or removes it, so one still there at the second read was
      // still the key's: the pair reads as one read at that instant. A
      // record freed in between: read in a block.
      try {
        const rec = t.get(key);
        cells = rec === undefined ? null : this.whole(rec);
      } catch (e) {
        if (!(e instanceof this.uniheap.FreedObjectError)) throw e;
        cells = this.heap.atomic(() => this.readIn(t, key, fields));
      }
    } else {
      cells = this.heap.atomic(() => this.readIn(t, key, fields));
    }
    return cells === null ? [STATUS.NOT_FOUND, null] : [STATUS.OK, cells];
  }

  /** The fields of key's record (in a block), or null when there is none. */
  readIn(t, key, fields) {
    const rec = t.get(key);
    return rec === undefined ? null : this.schema.read(rec, fields);
  }

  scan(table, start, count, fields) {
    const t = this.table(table);
    return [STATUS.OK, this.heap.atomic(() => {
      const out = [];
      if (count <= 0) return out;
      for (const [, rec] of t.range(start, undefined)) {
        out.push(this.schema.read(rec, fields));
        if (out.length >= count) break;
      }
      return out;
    })];
  }

  updateIn(t, key, values) {
    const rec = t.get(key);
    if (rec === undefined) return STATUS.NOT_FOUND;
    this.schema.update(rec, values);
    return STATUS.OK;
  }

  update(table, key, values) {
    const t = this.table(table);
    if (Object.keys(values).length === 1) {     // one field write: atomic and durable alone
      try {
        return this.updateIn(t, key, values);
      } catch (e) {
        if (!(e instanceof this.uniheap.ConflictError)) throw e;
        // another client had the record: as a block, retried
      }
    }
    return this.heap.atomic(() => this.updateIn(t, key, values));
  }

  insert(table, key, values) {
    const t = this.table(table);
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
