'use strict';
// The leak loop in a plain `node` (no --expose-gc), synchronous from start
// to end (never back to the event loop): each block makes a new node the
// current one of a root, and the previous node's proxy is dropped at once,
// or, with keep > 0, once keep more steps have made theirs (a ring of the
// last keep proxies: they outlive V8's young collections and die old).
// argv: socket, steps, [keep]. Prints one JSON line (steps done, pins left, the
// session's stats), or exits 1 with the error (a full heap included).
const uniheap = require('../..');

const [sock, stepsArg, keepArg] = process.argv.slice(2);
const steps = Number(stepsArg);
const keep = Number(keepArg ?? 0);
const ring = new Array(keep).fill(null);
const heap = uniheap.connect({ socket: sock });
const Node = heap.defineClass('t.gcplain.Node', { v: 'i64', next: 'ref' });
const Head = heap.defineClass('t.gcplain.Head', { cur: 'ref' });
const head = new Head();
heap.roots.set('t.gcplain.head', head);
let n = 0;
try {
  for (; n < steps; n++) {
    const node = heap.atomic(() => (head.cur = new Node({ v: n })));
    if (keep > 0) ring[n % keep] = node;
  }
  if (head.cur.v !== steps - 1) throw new Error(`cur holds ${head.cur.v}, not ${steps - 1}`);
} catch (e) {
  console.error(`step ${n}: ${e.stack}`);
  process.exit(1);
}
const s = heap.stats();
console.log(JSON.stringify({ steps: n, pins: s.pins, gcCycles: s.gcCycles, exposeGc: typeof gc }));
heap.close();
