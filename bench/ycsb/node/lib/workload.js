'use strict';
// CoreWorkload of YCSB 0.17.0, ported: the properties it reads, the keys it
// names, the values it writes, the operation mix it draws and how each
// operation uses the database. One CoreWorkload per client thread; the key
// counters are shared (counters.js) and passed in. Each operation returns
// nothing for a synchronous binding and a Promise for an asynchronous one
// (db.js's then()).

const { STATUS, then } = require('./db');
const { AcknowledgedCounter, Counter, SharedAcknowledgedCounter, SharedCounter } = require('./counters');
const g = require('./generators');
const { deterministicValue, randomValue } = require('./values');

const INT_MAX = 2 ** 31 - 1;
const KEY_CACHE_LIMIT = 1 << 20;

/** A property the workload cannot use; the message names it. */
class WorkloadError extends Error {
  constructor(message) { super(message); this.name = 'WorkloadError'; }
}

// Java's Boolean.parseBoolean: "true" in any case, anything else false.
const boolProp = (p, name, dflt) => String(p[name] ?? dflt).trim().toLowerCase() === 'true';

function intProp(p, name, dflt) {
  const v = String(p[name] ?? dflt).trim();
  if (!/^[+-]?\d+$/.test(v)) throw new WorkloadError(`property ${name}='${v}' is not an integer`);
  return parseInt(v, 10);
}

function floatProp(p, name, dflt) {
  const v = Number(String(p[name] ?? dflt).trim());
  if (!Number.isFinite(v)) throw new WorkloadError(`property ${name}='${p[name]}' is not a number`);
  return v;
}

/** recordcount, with YCSB's rule that 0 (the default) means 2^31-1. */
function recordCount(p) {
  return intProp(p, 'recordcount', '0') || INT_MAX;
}

/** [load key sequence, run insert key sequence]; shared: for several
 *  worker threads (attach them in the workers with attachCounters). */
function makeCounters(p, shared) {
  const start = intProp(p, 'insertstart', '0');
  const n = recordCount(p);
  return shared
    ? [new SharedCounter(start), new SharedAcknowledgedCounter(n)]
    : [new Counter(start), new AcknowledgedCounter(n)];
}

function attachCounters(states) {
  return [SharedCounter.attach(states[0]), SharedAcknowledgedCounter.attach(states[1])];
}

/** The discrete generator of the operation mix, in YCSB's order. */
function operationChooser(p, rng) {
  const chooser = new g.DiscreteGenerator(rng);
  for (const [prop, dflt, op] of [['readproportion', '0.95', 'READ'],
    ['updateproportion', '0.05', 'UPDATE'], ['insertproportion', '0.0', 'INSERT'],
    ['scanproportion', '0.0', 'SCAN'], ['readmodifywriteproportion', '0.0', 'READMODIFYWRITE']]) {
    const w = floatProp(p, prop, dflt);
    if (w > 0) chooser.addValue(w, op);
  }
  if (chooser.values.length === 0) throw new WorkloadError('every operation proportion is 0: nothing to run');
  return chooser;
}

function lengthGenerator(rng, dist, lo, hi, what) {
  if (dist === 'uniform') return new g.UniformLongGenerator(rng, lo, hi);
  if (dist === 'zipfian') return new g.ZipfianGenerator(rng, lo, hi);
  throw new WorkloadError(`${what}='${dist}' is not supported (uniform or zipfian)`);
}

class CoreWorkload {
  constructor(p, rng, keysequence, insertsequence, measurements) {
    this.rng = rng;
    this.measurements = measurements;
    this.table = p.table ?? 'usertable';
    this.fieldcount = intProp(p, 'fieldcount', '10');
    const prefix = p.fieldnameprefix ?? 'field';
    this.fieldnames = Array.from({ length: this.fieldcount }, (_, i) => `${prefix}${i}`);
    this.fieldlength = CoreWorkload.fieldLengthGenerator(p, rng);
    this.recordcount = recordCount(p);
    const insertstart = intProp(p, 'insertstart', '0');
    const insertcount = intProp(p, 'insertcount', String(this.recordcount - insertstart));
    if (this.recordcount < insertstart + insertcount) {
      throw new WorkloadError(`insertstart (${insertstart}) + insertcount (${insertcount}) exceeds recordcount (${this.recordcount})`);
    }
    this.zeropadding = intProp(p, 'zeropadding', '1');
    this.readallfields = boolProp(p, 'readallfields', 'true');
    this.writeallfields = boolProp(p, 'writeallfields', 'false');
    this.dataintegrity = boolProp(p, 'dataintegrity', 'false');
    if (this.dataintegrity && (p.fieldlengthdistribution ?? 'constant') !== 'constant') {
      throw new WorkloadError('dataintegrity=true needs fieldlengthdistribution=constant');
    }
    this.orderedinserts = (p.insertorder ?? 'hashed') !== 'hashed';
    this.keysequence = keysequence;
    this.insertsequence = insertsequence;
    this.operationchooser = operationChooser(p, rng);
    this.keychooser = this.makeKeyChooser(p, rng, insertstart, insertcount);
    this.fieldchooser = new g.UniformLongGenerator(rng, 0, this.fieldcount - 1);
    this.scanlength = lengthGenerator(rng, p.scanlengthdistribution ?? 'uniform',
      intProp(p, 'minscanlength', '1'), intProp(p, 'maxscanlength', '1000'), 'scanlengthdistribution');
    this.insertionRetryLimit = intProp(p, 'core_workload_insertion_retry_limit', '0');
    this.keyCache = new Map();
  }

  static fieldLengthGenerator(p, rng) {
    const dist = p.fieldlengthdistribution ?? 'constant';
    const length = intProp(p, 'fieldlength', '100');
    if (dist === 'constant') return new g.ConstantIntegerGenerator(length);
    return lengthGenerator(rng, dist, intProp(p, 'minfieldlength', '1'), length, 'fieldlengthdistribution');
  }

  makeKeyChooser(p, rng, insertstart, insertcount) {
    const dist = p.requestdistribution ?? 'uniform';
    if (dist === 'uniform') return new g.UniformLongGenerator(rng, insertstart, insertstart + insertcount - 1);
    if (dist === 'zipfian') {
      // Room for the keys the run will insert, so that the popular keys stay
      // the same as the key space grows (YCSB's 2x fudge factor); a key not
      // inserted yet is drawn again (nextKeynum).
      const opcount = intProp(p, 'operationcount', '0');
      const newkeys = Math.trunc(opcount * floatProp(p, 'insertproportion', '0.0') * 2.0);
      return new g.ScrambledZipfianGenerator(rng, insertstart, insertstart + insertcount + newkeys);
    }
    if (dist === 'latest') return new g.SkewedLatestGenerator(rng, this.insertsequence);
    throw new WorkloadError(`requestdistribution='${dist}' is not supported by this port (uniform, zipfian or latest)`);
  }

  // ---- keys and values ----

  /** "user" + fnvhash64(keynum) (or keynum with ordered inserts), padded
   *  with zeros to zeropadding digits. Memoized: hot keys repeat. */
  buildKeyName(keynum) {
    let key = this.keyCache.get(keynum);
    if (key !== undefined) return key;
    const value = this.orderedinserts ? String(keynum) : g.fnvString(keynum);
    key = 'user' + '0'.repeat(Math.max(0, this.zeropadding - value.length)) + value;
    if (this.keyCache.size >= KEY_CACHE_LIMIT) this.keyCache.clear();
    this.keyCache.set(keynum, key);
    return key;
  }

  value(key, field) {
    const size = this.fieldlength.nextValue();
    return this.dataintegrity ? deterministicValue(key, field, size) : randomValue(this.rng, size);
  }

  buildValues(key) {
    const values = {};
    for (const f of this.fieldnames) values[f] = this.value(key, f);
    return values;
  }

  buildSingleValue(key) {
    const f = this.fieldnames[this.fieldchooser.nextValue()];
    return { [f]: this.value(key, f) };
  }

  oneField() {
    return [this.fieldnames[this.fieldchooser.nextValue()]];
  }

  // ---- load ----

  /** Insert the next record of the load: true, false if it failed (or a
   *  Promise of that). */
  doInsert(db) {
    const key = this.buildKeyName(this.keysequence.nextValue());
    const values = this.buildValues(key);
    const attempt = (tries) => then(db.insert(this.table, key, values), (status) => {
      if (status === STATUS.OK) return true;
      if (tries + 1 > this.insertionRetryLimit) {
        process.stderr.write(`Error inserting, not retrying any more. number of attempts: ${tries + 1}Insertion Retry Limit: ${this.insertionRetryLimit}\n`);
        return false;
      }
      process.stderr.write(`Retrying insertion, retry count: ${tries + 1}\n`);
      return attempt(tries + 1);
    });
    return attempt(0);
  }

  // ---- run ----

  doTransaction(db) {
    switch (this.operationchooser.nextValue()) {
      case 'READ': return this.doTransactionRead(db);
      case 'UPDATE': return this.doTransactionUpdate(db);
      case 'INSERT': return this.doTransactionInsert(db);
      case 'SCAN': return this.doTransactionScan(db);
      default: return this.doTransactionReadModifyWrite(db);
    }
  }

  nextKeynum() {
    let keynum;
    do {
      keynum = this.keychooser.nextValue();
    } while (keynum > this.insertsequence.lastValue());
    return keynum;
  }

  verifyRow(key, cells) {
    const st = performance.now();
    let status = STATUS.OK;
    const names = cells ? Object.keys(cells) : [];
    if (names.length === 0) {
      status = STATUS.ERROR;              // no data is never valid
    } else {
      for (const f of names) {
        if (!deterministicValue(key, f, this.fieldlength.nextValue()).equals(cells[f])) {
          status = STATUS.UNEXPECTED_STATE;
          break;
        }
      }
    }
    this.measurements.measure('VERIFY', Math.trunc((performance.now() - st) * 1000));
    this.measurements.reportStatus('VERIFY', status);
  }

  doTransactionRead(db) {
    const key = this.buildKeyName(this.nextKeynum());
    let fields = null;
    if (!this.readallfields) fields = this.oneField();
    else if (this.dataintegrity) fields = this.fieldnames;
    return then(db.read(this.table, key, fields), (r) => {
      if (this.dataintegrity) this.verifyRow(key, r[1]);
    });
  }

  doTransactionReadModifyWrite(db) {
    const key = this.buildKeyName(this.nextKeynum());
    const fields = this.readallfields ? null : this.oneField();
    const values = this.writeallfields ? this.buildValues(key) : this.buildSingleValue(key);
    const st = performance.now();
    return then(db.read(this.table, key, fields), (r) => then(db.update(this.table, key, values), () => {
      const en = performance.now();
      if (this.dataintegrity) this.verifyRow(key, r[1]);
      this.measurements.measure('READ-MODIFY-WRITE', Math.trunc((en - st) * 1000));
    }));
  }

  doTransactionScan(db) {
    const key = this.buildKeyName(this.nextKeynum());
    const len = this.scanlength.nextValue();
    const fields = this.readallfields ? null : this.oneField();
    return db.scan(this.table, key, len, fields);
  }

  doTransactionUpdate(db) {
    const key = this.buildKeyName(this.nextKeynum());
    const values = this.writeallfields ? this.buildValues(key) : this.buildSingleValue(key);
    return db.update(this.table, key, values);
  }

  doTransactionInsert(db) {
    const keynum = this.insertsequence.nextValue();
    const ack = () => this.insertsequence.acknowledge(keynum);
    let r;
    try {
      const key = this.buildKeyName(keynum);
      r = db.insert(this.table, key, this.buildValues(key));
    } catch (e) {
      ack();
      throw e;
    }
    if (r instanceof Promise) return r.finally(ack);
    ack();
    return r;
  }
}

module.exports = {
  WorkloadError, CoreWorkload, makeCounters, attachCounters, operationChooser, recordCount,
  intProp, boolProp,
};
