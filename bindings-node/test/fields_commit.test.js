'use strict';
// obj.$fields() outside a block while another process rewrites every
// field of the object in one block per step: each result must be one
// commit's fields, never a mix of two (the same loop reading the fields
// one by one does see mixes: each getter reads at its own instant).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { HeapD, useHeap, WORKERS, spawnNode, finished, stopProcess, tempDir } = require('./helpers');

const READ_MS = 2000;

const d = new HeapD();
let heap;
let dir;
let Rec;
useHeap(d, (h) => {
  heap = h;
  dir = tempDir();
  Rec = heap.defineClass('t.one.Rec', { a: 'i64', name: 'string', b: 'i32', data: 'bytes', c: 'f64' });
}, () => fs.rmSync(dir, { recursive: true, force: true }));

/** The step whose commit r is, or a failure naming the fields that disagree. */
function stepOf(r) {
  const i = r.a;
  const one = r.b === i && r.c === i && r.name === `v${i}` && Buffer.isBuffer(r.data) &&
    r.data.toString() === `d${i}`;
  if (!one) assert.fail(`fields of two commits: ${JSON.stringify({ ...r, data: String(r.data) })}`);
  return i;
}

test('$fields() outside a block reads one commit\'s fields while another process rewrites them', async () => {
  const rec = new Rec({ a: 0, name: 'v0', b: 0, data: Buffer.from('d0'), c: 0 });
  heap.roots.set('t.one.rec', rec);
  const stop = path.join(dir, 'stop');
  const child = spawnNode(path.join(WORKERS, 'record_writer.js'), [stop], d);
  const out = finished(child);
  const seen = new Set();
  let reads = 0;
  try {
    await new Promise((resolve, reject) => {
      child.stdout.on('data', (b) => { if (String(b).includes('writing')) resolve(); });
      child.on('exit', () => reject(new Error('the writer ended before writing')));
    });
    const end = Date.now() + READ_MS;
    while (Date.now() < end) {
      for (let i = 0; i < 100; i++, reads++) seen.add(stepOf(rec.$fields()));
    }
    fs.writeFileSync(stop, '');
    const r = await out;
    assert.equal(r.code, 0, r.stderr);
    assert.ok(Number(r.stdout.trim().split('\n').pop()) > 0, r.stdout);
  } finally {
    await stopProcess(child);
  }
  // Else the writer never got in between and the test proves nothing.
  assert.ok(seen.size > 1, `only ${seen.size} distinct commits in ${reads} reads`);
});
