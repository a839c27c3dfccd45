#!/usr/bin/env node
// peer.js -- the Node peer of the cross-language wake-up test (tests/notify,
// run by test_pairs.py):
//
//   node peer.js SOCKET ROOT ROLE ROUNDS        ROLE = writer | waiter
//
// ROOT names a record NotifyCell { ping, pong, ts: i64 } that the test
// made; it is read through the generic proxy (not declared here).
//   writer: for i in 1..ROUNDS: one block sets ts = monotonic ns and
//           ping = i; then waits until pong == i.
//   waiter: for i in 1..ROUNDS: waits until ping == i, notes monotonic ns
//           - ts as the wake-up latency, then sets pong = i.
// Each wait reads the token first, then the field, then waits since that
// token, with a 10 s timeout: a timeout is a lost wake-up (stderr, exit 3).
// Prints `peer node ROLE: ROUNDS rounds`, and for the waiter a second line
// `latency_us p50=X p99=Y max=Z`.
//
// Waits are `await heap.changed()` (a wait session's thread, the result
// handed to the event loop); UNIHEAP_PEER_WAIT=sync makes them
// heap.waitSync() (this thread blocks), to compare the two.
'use strict';

const path = require('node:path');

// The checkout's package (a test program of the checkout: never an
// installed uniheap, which may be another version).
const uniheap = require(path.join(__dirname, '..', '..', 'bindings-node'));

const TIMEOUT_MS = 10000;
const SYNC = process.env.UNIHEAP_PEER_WAIT === 'sync';

/** Wait until cell[field] == value; exit 3 on a lost wake-up. */
async function waitUntil(heap, cell, field, value) {
  for (;;) {
    const since = heap.token(cell);
    if (cell[field] === value) return;
    const tok = SYNC ? heap.waitSync(cell, { since, timeout: TIMEOUT_MS })
      : await heap.changed(cell, { since, timeout: TIMEOUT_MS });
    if (tok === null) {
      process.stderr.write(`peer node: no wake-up within ${TIMEOUT_MS / 1000} s waiting for ` +
        `${field} == ${value} (now ${cell[field]})\n`);
      process.exit(3);
    }
  }
}

async function writer(heap, cell, rounds) {
  for (let i = 1; i <= rounds; i++) {
    heap.atomic(() => {
      cell.ts = process.hrtime.bigint();
      cell.ping = i;
    });
    await waitUntil(heap, cell, 'pong', i);
  }
}

async function waiter(heap, cell, rounds) {
  const lat = new Float64Array(rounds);
  for (let i = 1; i <= rounds; i++) {
    await waitUntil(heap, cell, 'ping', i);
    lat[i - 1] = Number(process.hrtime.bigint() - cell.$getBigInt('ts'));
    cell.pong = i;
  }
  return lat.sort();
}

function percentile(sortedNs, p) {
  return sortedNs[Math.min(sortedNs.length - 1, Math.floor(sortedNs.length * p))] / 1000;
}

async function main(argv) {
  const [sock, root, role, n] = argv;
  const rounds = Number(n);
  if (argv.length !== 4 || !['writer', 'waiter'].includes(role) || !Number.isInteger(rounds)) {
    process.stderr.write('usage: node peer.js SOCKET ROOT writer|waiter ROUNDS\n');
    return 2;
  }
  const heap = uniheap.connect({ socket: sock });
  let lat = null;
  try {
    const cell = heap.roots.get(root);
    if (cell === undefined) {
      process.stderr.write(`peer node: no root ${root}\n`);
      return 2;
    }
    if (role === 'writer') await writer(heap, cell, rounds);
    else lat = await waiter(heap, cell, rounds);
  } finally {
    heap.close();
  }
  process.stdout.write(`peer node ${role}: ${rounds} rounds\n`);
  if (lat && lat.length > 0) {
    process.stdout.write(`latency_us p50=${percentile(lat, 0.5).toFixed(1)} ` +
      `p99=${percentile(lat, 0.99).toFixed(1)} max=${(lat[lat.length - 1] / 1000).toFixed(1)}\n`);
  }
  return 0;
}

main(process.argv.slice(2)).then((code) => { process.exitCode = code; }, (e) => {
  process.stderr.write(`peer node: ${e.stack || e}\n`);
  process.exitCode = 2;
});
