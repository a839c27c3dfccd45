'use strict';
// Properties files, the command line, the report lines, and the client
// end to end on the in-process map.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const { Measurements, javaDouble, reportLines } = require('../lib/measurements');
const { parseCommandLine, parseProperties } = require('../lib/properties');

const CLIENT = path.join(__dirname, '..', 'bin', 'ycsb.js');
const WORKLOADS = path.join(__dirname, '..', '..', 'workloads');

test('properties file syntax', () => {
  const text = ['# a comment', '! another', '', 'a=1', 'b : two words ', 'c   3', 'd=x\\', '   y',
    'e=tab\\there', 'f=\\u0041'].join('\n');
  assert.deepEqual(parseProperties(text), { a: '1', b: 'two words ', c: '3', d: 'xy', e: 'tab\there', f: 'A' });
});

test('the command line overrides files in order', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ycsb-props-'));
  try {
    fs.writeFileSync(path.join(dir, 'one'), 'workload=site.ycsb.workloads.CoreWorkload\nrecordcount=10\nx=1\n');
    fs.writeFileSync(path.join(dir, 'two'), 'recordcount=20\n');
    const p = parseCommandLine(['-P', path.join(dir, 'one'), '-P', path.join(dir, 'two'), '-p', 'x=9',
      '-threads', '4', '-load', '-db', 'memory', '-s']);
    assert.equal(p.recordcount, '20');
    assert.equal(p.x, '9');
    assert.equal(p.threadcount, '4');
    assert.equal(p.dotransactions, 'false');
    assert.equal(p.db, 'memory');
    assert.equal(p.status, 'true');
  } finally {
    fs.rmSync(dir, { recursive: true });
  }
});

for (const [args, message] of [[['-p', 'novalue'], /name=value/], [['-threads'], /missing argument value for -threads/],
  [['-threads', 'two'], /integer/], [['-x'], /unknown option/], [['-p', 'a=b'], /missing property: workload/],
  [['-P', '/nonexistent/workload'], /unable to open the properties file/]]) {
  test(`command line error: ${args.join(' ')}`, () => {
    assert.throws(() => parseCommandLine(args), message);
  });
}

test('javaDouble', () => {
  assert.deepEqual([15625, 2.5, 1e7, 12345678.9, 0.0001, 0, NaN].map(javaDouble),
    ['15625.0', '2.5', '1.0E7', '1.23456789E7', '1.0E-4', '0.0', 'NaN']);
});

test('report lines have the Java client layout', () => {
  const m = new Measurements();
  for (const us of [10, 20, 30, 40]) {
    m.measure('READ', us);
    m.reportStatus('READ', 'OK');
  }
  m.measure('UPDATE-FAILED', 5);
  m.reportStatus('UPDATE', 'ERROR');
  const lines = reportLines(m, 200, 5);
  assert.deepEqual(lines.slice(0, 2), ['[OVERALL], RunTime(ms), 200', '[OVERALL], Throughput(ops/sec), 25.0']);
  for (const l of ['[READ], Operations, 4', '[READ], AverageLatency(us), 25.0', '[READ], MinLatency(us), 10',
    '[READ], MaxLatency(us), 40', '[READ], 95thPercentileLatency(us), 40', '[READ], 99thPercentileLatency(us), 40',
    '[READ], Return=OK, 4', '[UPDATE], Return=ERROR, 1', '[UPDATE-FAILED], Operations, 1']) {
    assert.ok(lines.includes(l), l);
  }
});

test('measurements merge', () => {
  const a = new Measurements();
  const b = new Measurements();
  a.measure('READ', 3);
  b.measure('READ', 3);
  b.measure('READ', 4);
  b.reportStatus('READ', 'OK');
  a.merge(b.toJSON());
  assert.deepEqual([...a.latencies.get('READ')], [[3, 2], [4, 1]]);
  assert.deepEqual([...a.returns.get('READ')], [['OK', 1]]);
});

test('the client runs workload D with two threads on the in-process map, data integrity on', () => {
  const r = spawnSync(process.execPath, [CLIENT, '-t', '-db', 'memory', '-P', path.join(WORKLOADS, 'workloadd'),
    '-p', 'recordcount=500', '-p', 'operationcount=2000', '-p', 'dataintegrity=true', '-p', 'seed=1',
    '-threads', '2'], { encoding: 'utf8', timeout: 120000 });
  assert.equal(r.status, 0, r.stderr);
  const get = (section, metric) => {
    const line = r.stdout.split('\n').find((l) => l.startsWith(`[${section}], ${metric},`));
    return line === undefined ? undefined : Number(line.split(', ')[2]);
  };
  assert.equal(get('READ', 'Return=OK') + get('INSERT', 'Return=OK'), 2000);
  assert.equal(get('VERIFY', 'Return=OK'), get('READ', 'Operations'));
  assert.ok(get('OVERALL', 'Throughput(ops/sec)') > 0);
});
