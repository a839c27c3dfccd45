'use strict';
// The database bindings, by the name -db gives them (or a module path).

const path = require('node:path');
const { DBError } = require('../db');

const BACKENDS = {
  uniheap: './uniheap',
  lmdb: './lmdb',
  memory: './memory',
  redis: './redis',
};

function dbClass(name) {
  const target = BACKENDS[name] ?? (name.includes('/') ? path.resolve(name) : null);
  if (target === null) throw new DBError(`unknown db '${name}': one of ${Object.keys(BACKENDS).join(', ')}, or a module path`);
  try {
    return require(target);
  } catch (e) {
    throw new DBError(`db '${name}': cannot load ${target}: ${e.message}`);
  }
}

/** True when every client thread of this binding keeps a private table
 *  (the built-in ones are known without loading them). */
function privateTables(name) {
  if (name in BACKENDS) return name === 'memory';
  return Boolean(dbClass(name).privateTables);
}

function makeDB(props) {
  const Cls = dbClass(props.db ?? 'uniheap');
  return new Cls(props);
}

module.exports = { BACKENDS, dbClass, makeDB, privateTables };
