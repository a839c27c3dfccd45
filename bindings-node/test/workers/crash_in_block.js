'use strict';
// Opens a block, takes AMOUNT from account 0 without putting it anywhere,
// says "in-block" on stdout and waits to be SIGKILLed inside the block.
const uniheap = require('../..');
const { accounts } = require('./bankdefs');

const heap = uniheap.connect();
const accts = accounts(heap);
heap.begin();
accts[0].balance -= Number(process.argv[2]);
accts[1].owner = 'never committed';
process.stdout.write('in-block\n');
setInterval(() => {}, 1000);
