'use strict';
// YCSB on LMDB (lmdb-js, npm lmdb), the memory-mapped peer.
//
// One environment (-p lmdb.path=DIR), one named database per table, the
// record encoded by codec.js. lmdb.durability: sync (LMDB's default, an
// fdatasync per commit) or nosync (MDB_NOSYNC | MDB_NOMETASYNC |
// MDB_WRITEMAP: survives process crashes, not power loss). Writes use
// lmdb-js's synchronous calls (putSync, transactionSync), one commit per
// operation like the other languages' bindings, not its batched async
// writes; an update reads, changes and rewrites the record in one write
// transaction.

const { open } = require('lmdb');
const codec = require('../codec');
const { DB, DBError, STATUS } = require('../db');

class LmdbDB extends DB {
  init() {
    const dir = this.props['lmdb.path'];
    if (!dir) throw new DBError('lmdb: give the environment\'s folder with -p lmdb.path=DIR');
    const durability = this.props['lmdb.durability'] ?? 'sync';
    if (durability !== 'sync' && durability !== 'nosync') throw new DBError(`lmdb.durability='${durability}': sync or nosync`);
    const nosync = durability === 'nosync';
    try {
      this.env = open({
        path: dir, maxDbs: 16, mapSize: Number(this.props['lmdb.mapsize'] ?? 8 * 2 ** 30),
        noSync: nosync, noMetaSync: nosync, useWritemap: nosync, noReadAhead: true,
        cache: false, compression: false,
      });
    } catch (e) {
      throw new DBError(`lmdb: cannot open the environment in ${dir}: ${e.message}`);
    }
    this.dbs = new Map();
  }

  cleanup() {
    return this.env.close();
  }

  db(table) {
    let d = this.dbs.get(table);
    if (d === undefined) {
      d = this.env.openDB({ name: table, encoding: 'binary', keyEncoding: 'ordered-binary', cache: false });
      this.dbs.set(table, d);
    }
    return d;
  }

  // lmdb-js keeps one read transaction and renews it on a new event turn
  // or after a write; a client thread's synchronous loop has no event
  // turns, so each read starts from the latest snapshot explicitly, as a
  // read transaction per operation does in the other languages.
  read(table, key, fields) {
    const d = this.db(table);
    this.env.resetReadTxn();
    const data = d.getBinaryFast(key);
    return data === undefined ? [STATUS.NOT_FOUND, null] : [STATUS.OK, codec.decode(data, fields)];
  }

  scan(table, start, count, fields) {
    const d = this.db(table);
    this.env.resetReadTxn();
    const out = [];
    for (const { value } of d.getRange({ start, limit: count })) out.push(codec.decode(value, fields));
    return [STATUS.OK, out];
  }

  update(table, key, values) {
    const d = this.db(table);
    return d.transactionSync(() => {
      const data = d.getBinaryFast(key);
      if (data === undefined) return STATUS.NOT_FOUND;
      const rec = codec.decode(data);
      Object.assign(rec, values);
      d.putSync(key, codec.encode(rec));
      return STATUS.OK;
    });
  }

  insert(table, key, values) {
    this.db(table).putSync(key, codec.encode(values));
    return STATUS.OK;
  }

  delete(table, key) {
    return this.db(table).removeSync(key) ? STATUS.OK : STATUS.NOT_FOUND;
  }
}

module.exports = LmdbDB;
