#!/usr/bin/env node
'use strict';
// The YCSB client of the Node port; see bench/ycsb/README.md.
const { main } = require('../lib/client');

main(process.argv.slice(2)).then((code) => { process.exitCode = code; }, (e) => {
  process.stderr.write(`${e.stack || e}\n`);
  process.exitCode = 1;
});
