#!/usr/bin/env node
// peer.js -- the Node writer or reader of the cross-language growth test
// (tests/grow/test_growth.py; the protocol is tests/c/prog_grow_fill.c's,
// as peer.py describes it):
//
//   node peer.js SOCKET write ID BLOCKS [FIRST]
//   node peer.js SOCKET read WRITERS DIR
//
// write: "ready" once connected, then (if $UH_GROW_GO names a file, once it
// exists) blocks FIRST..BLOCKS-1 of 200 GrowFill records, block k under the
// root "w<ID>.<k>"; prints "blocks N" (acknowledged in all); exit 0, 3 after
// HeapFull, 1 after another error. read: read-only; prints "ready" once
// connected, follows and checks every writer's blocks until DIR/done exists,
// then one more pass; prints "read N"; exit 0, or 2 if a check failed.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

// The checkout's package (never an installed uniheap, maybe another version).
const uniheap = require(path.join(__dirname, '..', '..', 'bindings-node'));

const REC = 200;

function value(me, k, i) {
  return me * 1e9 + k * 1000 + i;
}

/** Connected: say so, then wait for $UH_GROW_GO (a file), if set. */
function waitGo() {
  console.log('ready');
  const go = process.env.UH_GROW_GO;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  while (go && !fs.existsSync(go)) Atomics.wait(pause, 0, 0, 5);
}

function write(heap, me, blocks, first) {
  waitGo();
  const GrowFill = heap.defineClass('GrowFill',
    { value: 'i64', next: 'ref', a: 'i64', b: 'i64', c: 'i64', d: 'i64' });
  let k = first;
  try {
    for (; k < blocks; k++) {
      heap.atomic(() => {
        let prev = null;
        for (let i = 0; i < REC; i++) prev = new GrowFill({ value: value(me, k, i), next: prev });
        heap.roots.set(`w${me}.${k}`, prev);
      });
    }
  } catch (e) {
    if (e instanceof uniheap.HeapFullError) {
      console.log(`blocks ${k}\nfull: ${e.message}`);
      return 3;
    }
    console.log(`blocks ${k}`);
    console.error(`writer ${me}, block ${k}: ${e.name}: ${e.message}`);
    return 1;
  }
  console.log(`blocks ${k}`);
  return 0;
}

/** true: block k of writer w is published and whole; false: not yet. */
function readBlock(heap, w, k) {
  let o = heap.roots.get(`w${w}.${k}`);
  if (o === null || o === undefined) return false;
  let n = 0;
  for (; o !== null && n <= REC; n++) {
    const want = value(w, k, REC - 1 - n);
    if (o.value !== want) throw new Error(`w${w}.${k} record ${n}: ${o.value}, want ${want}`);
    o = o.next;
  }
  if (n !== REC) throw new Error(`w${w}.${k}: ${n} records`);
  return true;
}

function read(heap, writers, done) {
  console.log('ready');
  const next = new Array(writers).fill(0);
  const pause = new Int32Array(new SharedArrayBuffer(4));
  let total = 0;
  for (let last = false; !last;) {
    last = fs.existsSync(done);
    for (let w = 0; w < writers; w++) {
      while (readBlock(heap, w, next[w])) {
        next[w]++;
        total++;
      }
    }
    if (!last) Atomics.wait(pause, 0, 0, 2);
  }
  console.log(`read ${total}`);
  return 0;
}

function main(argv) {
  const [sock, mode] = argv;
  if (argv.length < 4 || (mode !== 'write' && mode !== 'read')) {
    console.error('usage: peer.js SOCKET write ID BLOCKS [FIRST] | read WRITERS DIR');
    return 2;
  }
  const heap = uniheap.connect({ socket: sock, readonly: mode === 'read' });
  try {
    if (mode === 'write') {
      return write(heap, Number(argv[2]), Number(argv[3]), Number(argv[4] || 0));
    }
    try {
      return read(heap, Number(argv[2]), path.join(argv[3], 'done'));
    } catch (e) {
      console.error(`reader: ${e.name}: ${e.message}`);
      return 2;
    }
  } finally {
    heap.close();
  }
}

process.exitCode = main(process.argv.slice(2));
