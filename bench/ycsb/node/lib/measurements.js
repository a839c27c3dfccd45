'use strict';
// Latencies and return codes per operation, and the report the Java client
// prints.
//
// Latencies are whole microseconds from performance.now() (monotonic, from
// the nanosecond clock), truncated like YCSB's (int)((end-start)/1000). A
// worker counts how often each latency occurred; the counts go into one
// HdrHistogram per operation (hdr-histogram-js, 3 significant digits as
// YCSB's Recorder(3)) when the report is made, so that merging the
// workers' measurements is a sum of counts.

const OK = 'OK';
const ORDER = ['READ', 'UPDATE', 'INSERT', 'SCAN', 'READ-MODIFY-WRITE', 'DELETE', 'VERIFY'];
const HIGHEST_US = 3600 * 1000 * 1000;       // one hour; longer ones are clamped

class Measurements {
  constructor() {
    this.latencies = new Map();     // name -> Map(latency_us -> count)
    this.returns = new Map();       // operation -> Map(status -> count)
  }

  measure(name, latencyUs) {
    let c = this.latencies.get(name);
    if (c === undefined) this.latencies.set(name, c = new Map());
    c.set(latencyUs, (c.get(latencyUs) || 0) + 1);
  }

  reportStatus(op, status) {
    let r = this.returns.get(op);
    if (r === undefined) this.returns.set(op, r = new Map());
    r.set(status, (r.get(status) || 0) + 1);
  }

  /** A structured-clone-able copy, to post from a worker. */
  toJSON() {
    const pairs = (m) => [...m].map(([k, v]) => [k, [...v]]);
    return { latencies: pairs(this.latencies), returns: pairs(this.returns) };
  }

  merge(state) {
    for (const [name, counts] of state.latencies) {
      for (const [v, n] of counts) {
        let c = this.latencies.get(name);
        if (c === undefined) this.latencies.set(name, c = new Map());
        c.set(v, (c.get(v) || 0) + n);
      }
    }
    for (const [op, codes] of state.returns) {
      for (const [s, n] of codes) {
        let r = this.returns.get(op);
        if (r === undefined) this.returns.set(op, r = new Map());
        r.set(s, (r.get(s) || 0) + n);
      }
    }
  }

  histogram(name) {
    // Loaded here: only the main thread makes reports (worker threads
    // start faster without it).
    const hdr = require('hdr-histogram-js');
    const h = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: HIGHEST_US,
      numberOfSignificantValueDigits: 3 });
    for (const [v, n] of this.latencies.get(name) || []) {
      h.recordValueWithCount(Math.min(v, HIGHEST_US), n);
    }
    return h;
  }
}

/** d as Java's Double.toString prints it. */
function javaDouble(d) {
  if (Number.isNaN(d)) return 'NaN';
  if (!Number.isFinite(d)) return d > 0 ? 'Infinity' : '-Infinity';
  if (d === 0) return '0.0';
  const a = Math.abs(d);
  if (a >= 1e-3 && a < 1e7) {
    const s = String(d);
    return s.includes('.') || s.includes('e') ? s : s + '.0';
  }
  const [mant, exp] = d.toExponential().split('e');
  return `${mant.includes('.') ? mant : mant + '.0'}E${parseInt(exp, 10)}`;
}

function ordinal(p) {
  if (!Number.isInteger(p)) return javaDouble(p);
  if ([11, 12, 13].includes(p % 100)) return `${p}th`;
  return `${p}${['th', 'st', 'nd', 'rd', 'th', 'th', 'th', 'th', 'th', 'th'][p % 10]}`;
}

function namesInOrder(m) {
  const names = new Set([...m.latencies.keys(), ...m.returns.keys()]);
  const first = ORDER.filter((n) => names.has(n));
  const rest = [...names].filter((n) => !ORDER.includes(n)).sort();
  return first.concat(rest);
}

/** The lines of the Java client's text report. */
function reportLines(m, runtimeMs, operations, percentiles = [95, 99]) {
  const throughput = runtimeMs ? 1000 * operations / runtimeMs : NaN;
  const lines = [`[OVERALL], RunTime(ms), ${runtimeMs}`,
    `[OVERALL], Throughput(ops/sec), ${javaDouble(throughput)}`];
  for (const name of namesInOrder(m)) {
    const h = m.histogram(name);
    const n = h.totalCount;
    lines.push(`[${name}], Operations, ${n}`);
    lines.push(`[${name}], AverageLatency(us), ${javaDouble(n ? h.mean : NaN)}`);
    const min = n === 0 || hasZero(m, name) ? 0 : h.minNonZeroValue;
    lines.push(`[${name}], MinLatency(us), ${min}`);
    lines.push(`[${name}], MaxLatency(us), ${h.maxValue}`);
    for (const p of percentiles) {
      lines.push(`[${name}], ${ordinal(p)}PercentileLatency(us), ${h.getValueAtPercentile(p)}`);
    }
    const codes = m.returns.get(name) || new Map();
    const order = [...codes.keys()].sort((a, b) => (a !== OK) - (b !== OK) || (a < b ? -1 : a > b));
    for (const s of order) lines.push(`[${name}], Return=${s}, ${codes.get(s)}`);
  }
  return lines;
}

function hasZero(m, name) {
  const c = m.latencies.get(name);
  return c !== undefined && c.has(0);
}

function parsePercentiles(text) {
  const ps = String(text).split(',').map(Number);
  return ps.every((p) => Number.isFinite(p)) ? ps : [95, 99];
}

module.exports = { OK, Measurements, javaDouble, reportLines, parsePercentiles };
