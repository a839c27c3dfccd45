'use strict';
// A view of a bytes value keeps a heap that was never closed mapped: the
// heap's proxies and the Heap are dropped and collected, the view (and
// then its .buffer alone) still reads the value; once nothing reaches the
// mapping, the session is collected and ends. Run with --expose-gc;
// argv: the heapctl binary. Prints "ok" or throws.
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const { setImmediate: tick } = require('node:timers/promises');
const uniheap = require('../..');

const heapctl = process.argv[2];

function sessions() {
  const r = spawnSync(heapctl, ['--json', 'status'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return Number(JSON.parse(r.stdout).sessions || 0);
}

async function collect() {
  for (let i = 0; i < 6; i++) {
    global.gc();
    await tick();	// Node-API finalizers run after the GC
  }
}

const DATA = Buffer.alloc(100000, 7);

function make() {
  const heap = uniheap.connect();
  const m = new uniheap.PMap(heap);
  m.set('k', DATA);
  return m.view('k');
}

async function main() {
  const before = sessions();
  let v = make();
  assert.equal(sessions(), before + 1);
  await collect();
  assert.equal(sessions(), before + 1, 'the view keeps its session');
  assert.ok(v.valid);
  assert.ok(Buffer.from(v).equals(DATA));
  const { byteOffset, length } = v;
  let ab = v.buffer;
  v = null;
  await collect();
  assert.equal(sessions(), before + 1, 'the mapping\'s ArrayBuffer keeps its session');
  assert.ok(Buffer.from(ab, byteOffset, length).equals(DATA));
  ab = null;
  for (let i = 0; i < 100 && sessions() !== before; i++) await collect();
  assert.equal(sessions(), before, 'nothing reaches the mapping: the session ends');
  console.log('ok');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
