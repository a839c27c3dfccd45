'use strict';
// demo_board.js -- the Node process of `make demo`.
// Usage: node demo_board.js AMOUNT
//
// Connects to heapd ($UNIHEAP_SOCKET), opens the root "demo.board" that the
// C process published (its classes DemoBoard and DemoCounter are not
// declared here: the proxies come from the heap's class table), says what
// the counter holds and which process wrote it last, then adds AMOUNT to it
// in one failure-atomic block (re-run if another process wins a conflict)
// and says the value it committed.
const path = require('node:path');
const uniheap = require(process.env.UNIHEAP_NODE || path.join(__dirname, '..', '..', 'bindings-node'));

function main() {
  const amount = Number(process.argv[2]);
  if (process.argv.length !== 3 || !Number.isSafeInteger(amount)) {
    process.stderr.write('usage: node demo_board.js AMOUNT\n');
    return 2;
  }
  const me = `node (pid ${process.pid})`;
  const heap = uniheap.connect();
  try {
    const board = heap.roots.get('demo.board');
    if (board === undefined) {
      process.stderr.write(`${me}: no root "demo.board" in this heap: run the C process first\n`);
      return 1;
    }
    const counter = board.counter;
    console.log(`${me}: found "${board.title}": counter = ${counter.value}, ` +
      `last written by pid ${counter.writer_pid}`);
    const now = heap.atomic(() => {
      counter.value += amount;
      counter.writer_pid = process.pid;
      return counter.value;
    });
    console.log(`${me}: added ${amount} in one atomic block: counter = ${now}`);
    return 0;
  } finally {
    heap.close();
  }
}

process.exitCode = main();
