#!/usr/bin/env node
// peer.js -- the Node participant of the cross-language GC model test
// (tests/gc_model/test_languages.py; the protocol is prog_gc_model.c's,
// described in test_languages.py):
//
//   node peer.js SOCKET ID NPROC SECONDS SEED
//
// Builds chains of gcm.Node under its keys "w<ID>.k<K>" of the map at root
// "gcm.map", holds some chains' heads as proxies in an array (the proxy is
// the pin: no explicit pin in Node), drops them, re-links its heads' `other`
// to any participant's chain, removes keys and reads other participants'
// chains in blocks, for SECONDS seconds, while heapd's collector runs cycles
// back to back. Every chain it holds or keeps under its keys is checked
// (outside any block) for being exactly the one it built, and one hop along
// `other` for being whole: a FreedObjectError or a wrong tag, length or
// payload there means the collector took something live.
//
// A dropped proxy unpins once V8 has collected it (the binding's weak
// references, swept as the pins grow, after each full V8 collection, and
// after a full one the binding forces when too many are pinned or a block
// finds the heap full): the loop runs in a plain `node`, without
// --expose-gc and without ever returning to the event loop, as any program
// may.
//
// Exit 0 when done (prints its counters), 1 on an unexpected error (a full
// heap included), 2 when something live was found freed or torn.
'use strict';

const path = require('node:path');

// The checkout's package (never an installed uniheap, maybe another version).
const uniheap = require(path.join(__dirname, '..', '..', 'bindings-node'));

const NKEYS = 64;
const TRIES = 1000;   // a block's tries: test_languages.py, "Tries"
const NHELD = 32;
const PAY_MAX = 47;

class Torn extends Error {}

/** mulberry32: a small seeded generator (the runs need not match C's). */
function rng(seed) {
  let a = seed >>> 0;
  return (n) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) % n);
  };
}

function payloadOf(tag) {
  const b = Buffer.alloc(1 + (tag % PAY_MAX));
  for (let j = 0; j < b.length; j++) b[j] = (tag % 251 + 37 * j) % 256;
  return b;
}

/** Throw Torn unless the chain at head is whole (and, with want = [base, n],
 * the one it names); FreedObjectError propagates. */
function checkChain(head, want) {
  let base = 0;
  let node = head;
  for (let i = 0; node !== null; i++) {
    const tag = node.tag;
    const rest = node.rest;
    const next = node.next;
    const pay = node.pay;
    if (i === 0) {
      base = tag;
      if (want && (base !== want[0] || rest !== want[1] - 1)) {
        throw new Torn(`head @${head.$offset}: tag ${tag} rest ${rest}, want ${want}`);
      }
    }
    if (tag !== base + i || (rest === 0) !== (next === null) || i > 4) {
      throw new Torn(`node ${i} of @${head.$offset}: tag ${tag} rest ${rest} (base ${base})`);
    }
    if (pay === null || !pay.equals(payloadOf(tag))) {
      throw new Torn(`node ${i} of @${head.$offset}: payload ${pay && pay.toString('hex')}`);
    }
    node = next;
  }
}

class Peer {
  constructor(heap, me, nproc, seed) {
    this.heap = heap;
    this.me = me;
    this.nproc = nproc;
    this.rnd = rng(seed * 1000003 + me);
    this.Node = heap.defineClass('gcm.Node',
      { next: 'ref', other: 'ref', tag: 'i64', rest: 'i64', pay: 'bytes' });
    this.map = heap.roots.get('gcm.map');
    this.own = new Array(NKEYS).fill(null);     // [base, n] under each key
    this.held = new Array(NHELD).fill(null);    // [proxy of the head, [base, n]]
    this.n = { build: 0, hold: 0, relink: 0, remove: 0, verify: 0, peek_conflicts: 0, peek_freed: 0 };
  }

  key(w, k) { return `w${w}.k${k}`; }

  build(step) {
    const k = this.rnd(NKEYS);
    const n = 1 + this.rnd(4);
    const base = this.me * 2 ** 40 + step * 256;
    this.heap.atomic(() => {
      let next = null;
      for (let i = n - 1; i >= 0; i--) {
        next = new this.Node({ next, tag: base + i, rest: n - 1 - i, pay: payloadOf(base + i) });
      }
      this.map.set(this.key(this.me, k), next);
    });
    this.own[k] = [base, n];
    this.n.build++;
  }

  hold() {
    const k = this.rnd(NKEYS);
    const i = this.rnd(NHELD);
    if (this.own[k] === null) return;
    this.held[i] = [this.map.get(this.key(this.me, k)), this.own[k]];
    this.n.hold++;
  }

  unhold() {
    this.held[this.rnd(NHELD)] = null;          // the proxy's pin goes when V8 collects it
  }

  relink() {
    const k = this.rnd(NKEYS);
    const w2 = this.rnd(this.nproc);
    const k2 = this.rnd(NKEYS);
    if (this.own[k] === null) return;
    this.heap.atomic(() => {
      const head = this.map.get(this.key(this.me, k));
      const target = this.map.get(this.key(w2, k2));
      if (target !== undefined) head.other = target;
    });
    this.n.relink++;
  }

  remove() {
    const k = this.rnd(NKEYS);
    if (this.own[k] === null) return;
    this.heap.atomic(() => this.map.delete(this.key(this.me, k)));   // conflicts re-run
    this.own[k] = null;
    this.n.remove++;
  }

  peek() {
    const w = this.rnd(this.nproc);
    const k = this.rnd(NKEYS);
    try {
      this.heap.atomic(() => {
        const head = this.map.get(this.key(w, k));
        if (head !== undefined) checkChain(head, null);
      });
    } catch (e) {
      if (e instanceof uniheap.ConflictError) this.n.peek_conflicts++;
      // Replaced, and collected, after the block read its key: the block
      // could not have committed either (a chain still under its key is
      // its owner's to find freed).
      else if (e instanceof uniheap.FreedObjectError) this.n.peek_freed++;
      else throw e;
    }
  }

  verifyLive(what, head, want) {
    try {
      checkChain(head, want);
      if (head.other !== null) checkChain(head.other, null);
    } catch (e) {
      if (!(e instanceof Torn || e instanceof uniheap.FreedObjectError)) throw e;
      process.stderr.write(`peer node ${this.me}: ${what} chain [${want}]: ${e.name}: ${e.message}\n`);
      process.exit(2);
    }
  }

  verify() {
    for (const h of this.held) if (h !== null) this.verifyLive('held', h[0], h[1]);
    for (let k = 0; k < NKEYS; k++) {
      if (this.own[k] !== null) {
        this.verifyLive("own key's", this.map.get(this.key(this.me, k)), this.own[k]);
      }
    }
    this.n.verify++;
  }

  async run(seconds) {
    const stop = Date.now() + seconds * 1000;
    let step = 0;
    while (step % 256 !== 0 || Date.now() < stop) {
      step++;
      const r = this.rnd(100);
      if (r < 40) this.build(step);
      else if (r < 55) this.hold();
      else if (r < 62) this.unhold();
      else if (r < 72) this.relink();
      else if (r < 80) this.remove();
      else if (r < 92) this.peek();
      else this.verify();
    }
    this.verify();
    return step;
  }
}

async function main(argv) {
  if (argv.length !== 5) {
    process.stderr.write('usage: node peer.js SOCKET ID NPROC SECONDS SEED\n');
    return 1;
  }
  const [sock, me, nproc, seconds, seed] = [argv[0], ...argv.slice(1).map(Number)];
  const heap = uniheap.connect({ socket: sock });
  heap.maxTries = TRIES;
  try {
    const peer = new Peer(heap, me, nproc, seed);
    let steps;
    try {
      steps = await peer.run(seconds);
    } catch (e) {
      if (e instanceof Torn) {
        process.stderr.write(`peer node ${me}: torn chain read in a block: ${e.message}\n`);
        return 2;
      }
      throw e;
    }
    const st = heap.stats();
    const counts = Object.entries(peer.n).map(([k, v]) => `${k}=${v}`).join(' ');
    process.stdout.write(`peer node ${me}: steps=${steps} ${counts} gc_cycles=${st.gcCycles} ` +
      `pins=${st.pins}\n`);
  } finally {
    heap.close();
  }
  return 0;
}

main(process.argv.slice(2)).then((code) => { process.exitCode = code; }, (e) => {
  process.stderr.write(`peer node: ${e.stack || e}\n`);
  process.exitCode = 1;
});
