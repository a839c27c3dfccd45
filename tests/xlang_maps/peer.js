/*
 * peer.js -- the Node peer of the cross-language test of hash-map values
 * (test_inline_values.py, which describes the protocol):
 *
 *   node peer.js SOCKET ROOT ME [EARLIER,...]
 *
 * Checks what the earlier writers left in the hash map under ROOT, then
 * adds its own keys and overwrites the shared ones, as peer.py does. Exit
 * 0 ("peer ME: checked N values, wrote M"), 2 with every mismatch printed,
 * 1 on another error.
 */
'use strict';
const path = require('node:path');
const uniheap = require(path.join(__dirname, '..', '..', 'bindings-node'));

const NKEYS = 120;

/* Key i's value as lang writes it: a string for even i, a Buffer for odd,
 * of (i * 37) % 200 bytes (inline in the entry up to 128, an object
 * beyond). */
function value(lang, i) {
  const n = (i * 37) % 200;
  const seed = lang.length;
  if (i % 2 === 0) {
    let s = '';
    for (let j = 0; j < n; j++) s += String.fromCharCode(97 + ((i + j + seed) % 26));
    return s;
  }
  const b = Buffer.alloc(n);
  for (let j = 0; j < n; j++) b[j] = (i * 7 + j + seed) % 256;
  return b;
}

function same(got, want) {
  if (typeof want === 'string') return got === want;
  return Buffer.isBuffer(got) && got.equals(want);
}

function check(m, earlier) {
  const bad = [];
  for (const lang of new Set(earlier)) {
    for (let i = 0; i < NKEYS; i++) {
      if (!same(m.get(`${lang}-${i}`), value(lang, i))) bad.push(`${lang}-${i}`);
    }
  }
  if (earlier.length) {
    const last = earlier[earlier.length - 1];
    for (let i = 0; i < NKEYS; i++) {
      if (!same(m.get(`shared-${i}`), value(last, i))) bad.push(`shared-${i}: not ${last}'s`);
    }
  }
  const want = earlier.length ? NKEYS * (new Set(earlier).size + 1) : 0;
  if (m.size !== want) bad.push(`${m.size} keys, not ${want}`);
  return bad;
}

function main(argv) {
  if (argv.length < 3) {
    process.stderr.write('usage: node peer.js SOCKET ROOT ME [EARLIER,...]\n');
    return 1;
  }
  const [sock, root, me] = argv;
  const earlier = (argv[3] || '').split(',').filter((w) => w);
  const heap = uniheap.connect({ socket: sock });
  try {
    if (!heap.roots.get(root)) heap.roots.set(root, new uniheap.PMap(heap));
    const m = heap.roots.get(root);
    const bad = check(m, earlier);
    const checked = m.size;
    for (const line of bad) process.stdout.write(`peer ${me}: MISMATCH ${line}\n`);
    if (bad.length) return 2;
    for (let i = 0; i < NKEYS; i++) {
      m.set(`${me}-${i}`, value(me, i));
      m.set(`shared-${i}`, value(me, i));
    }
    process.stdout.write(`peer ${me}: checked ${checked} values, wrote ${2 * NKEYS}\n`);
  } finally {
    heap.close();
  }
  return 0;
}

process.exitCode = main(process.argv.slice(2));
