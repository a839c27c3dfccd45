'use strict';
// obj.$fields() outside a block while another process rewrites every
// field of the object in one block per step: each result must be one
// commit's fields, never a mix of two (the same loop reading the fields
// one by one does see mixes: each getter reads at its own instant).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { HeapD, useHeap, WORKERS, whileWriting, tempDir } = require('./helpers');

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
  const seen = new Set();
  const reads = await whileWriting(d, path.join(WORKERS, 'record_writer.js'), [stop], stop,
    () => seen.add(stepOf(rec.$fields())), READ_MS);
  // Else the writer never got in between and the test proves nothing.
  assert.ok(seen.size > 1, `only ${seen.size} distinct commits in ${reads} reads`);
});
