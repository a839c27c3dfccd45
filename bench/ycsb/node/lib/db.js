'use strict';
// The database interface of the port (site.ycsb.DB) and the wrapper that
// times every call (site.ycsb.DBWrapper).
//
// A binding extends DB. Records are plain objects of field name -> Buffer;
// `fields` is null for all fields or an array of names. read and scan
// return [status, result], the others a status. A binding whose calls are
// asynchronous (Redis) returns Promises of the same and sets isAsync.

const STATUS = {
  OK: 'OK', ERROR: 'ERROR', NOT_FOUND: 'NOT_FOUND', NOT_IMPLEMENTED: 'NOT_IMPLEMENTED',
  UNEXPECTED_STATE: 'UNEXPECTED_STATE', BAD_REQUEST: 'BAD_REQUEST',
};

/** A binding cannot start or stop; the message says what to fix. */
class DBError extends Error {
  constructor(message) { super(message); this.name = 'DBError'; }
}

class DB {
  constructor(props) {
    this.props = props;
    this.isAsync = false;
  }

  /** Connect; once per client thread before its first call. May be async. */
  init() {}

  /** Disconnect; once per client thread after its last call. May be async. */
  cleanup() {}
}

/** f(x), or x.then(f) when x is a Promise: one body for sync and async
 *  bindings, with no microtask for the sync ones. */
function then(x, f) {
  return x instanceof Promise ? x.then(f) : f(x);
}

/** Times each call of a DB and counts its return code, as YCSB's
 *  DBWrapper: a failed call's latency goes to "<OP>-FAILED". An exception
 *  from the binding counts as ERROR; the first one per operation is
 *  printed to stderr. */
class DBWrapper {
  constructor(db, measurements) {
    this.db = db;
    this.m = measurements;
    this.reported = new Set();
  }

  measure(op, status, start) {
    const us = Math.trunc((performance.now() - start) * 1000);
    this.m.measure(status === STATUS.OK ? op : `${op}-FAILED`, us);
    this.m.reportStatus(op, status);
  }

  failed(op, e) {
    if (!this.reported.has(op)) {
      this.reported.add(op);
      process.stderr.write(`${op} failed in ${this.db.constructor.name}: ${e && e.stack || e}\n`);
    }
    return STATUS.ERROR;
  }

  call(op, withResult, invoke) {
    const st = performance.now();
    let r;
    try {
      r = invoke();
    } catch (e) {
      r = withResult ? [this.failed(op, e), null] : this.failed(op, e);
    }
    if (r instanceof Promise) {
      const done = (res) => {
        this.measure(op, withResult ? res[0] : res, st);
        return res;
      };
      return r.then(done, (e) => done(withResult ? [this.failed(op, e), null] : this.failed(op, e)));
    }
    this.measure(op, withResult ? r[0] : r, st);
    return r;
  }

  read(table, key, fields) { return this.call('READ', true, () => this.db.read(table, key, fields)); }
  scan(table, start, count, fields) {
    return this.call('SCAN', true, () => this.db.scan(table, start, count, fields));
  }
  update(table, key, values) { return this.call('UPDATE', false, () => this.db.update(table, key, values)); }
  insert(table, key, values) { return this.call('INSERT', false, () => this.db.insert(table, key, values)); }
  delete(table, key) { return this.call('DELETE', false, () => this.db.delete(table, key)); }
}

module.exports = { STATUS, DB, DBError, DBWrapper, then };
