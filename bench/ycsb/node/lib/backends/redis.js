'use strict';
// YCSB on Redis, the server people use to share data between processes
// written in different languages (node-redis's client, npm @redis/client).
//
// -p redis.socket=PATH (a UNIX socket; else redis.host/redis.port). A
// record is a hash; the table's keys are also members of a sorted set named
// after the table, all with score 0, so that ZRANGE BYLEX gives them in key
// order for scans. An insert writes both in one MULTI/EXEC; a scan fetches
// the keys, then the hashes in one pipeline. Every call is asynchronous.

const { createClient, RESP_TYPES } = require('@redis/client');
const { DB, DBError, STATUS } = require('../db');

class RedisDB extends DB {
  constructor(props) {
    super(props);
    this.isAsync = true;
  }

  async init() {
    const sock = this.props['redis.socket'];
    const where = sock || `${this.props['redis.host'] ?? 'localhost'}:${this.props['redis.port'] ?? '6379'}`;
    const socket = sock ? { path: sock } : { host: this.props['redis.host'] ?? 'localhost', port: Number(this.props['redis.port'] ?? 6379) };
    // Field values as Buffers, not strings.
    this.r = createClient({ socket: { ...socket, reconnectStrategy: false } })
      .withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
    this.r.on('error', () => {});      // surfaced by the failing call
    try {
      await this.r.connect();
    } catch (e) {
      throw new DBError(`redis: no server at ${where} (${e.message}); start redis-server or give -p redis.socket=PATH`);
    }
  }

  async cleanup() {
    if (this.r && this.r.isOpen) await this.r.close();
  }

  async read(table, key, fields) {
    if (fields === null) {
      const h = await this.r.hGetAll(key);
      return Object.keys(h).length ? [STATUS.OK, { ...h }] : [STATUS.NOT_FOUND, null];
    }
    const vals = await this.r.hmGet(key, fields);
    if (vals.every((v) => v === null)) return [STATUS.NOT_FOUND, null];
    const out = {};
    fields.forEach((f, i) => { if (vals[i] !== null) out[f] = vals[i]; });
    return [STATUS.OK, out];
  }

  async scan(table, start, count, fields) {
    const keys = await this.r.zRange(table, `[${start}`, '+', { BY: 'LEX', LIMIT: { offset: 0, count } });
    const pipe = this.r.multi();
    for (const k of keys) {
      if (fields === null) pipe.hGetAll(k);
      else pipe.hmGet(k, fields);
    }
    const rows = keys.length ? await pipe.execAsPipeline() : [];
    if (fields === null) return [STATUS.OK, rows.map((h) => ({ ...h }))];
    return [STATUS.OK, rows.map((vals) => {
      const out = {};
      fields.forEach((f, i) => { if (vals[i] !== null) out[f] = vals[i]; });
      return out;
    })];
  }

  async update(table, key, values) {
    // One HSET, as YCSB's own Redis binding: no check that the record
    // exists (the workloads only update loaded keys).
    await this.r.hSet(key, values);
    return STATUS.OK;
  }

  async insert(table, key, values) {
    await this.r.multi().hSet(key, values).zAdd(table, { score: 0, value: key }).exec();
    return STATUS.OK;
  }

  async delete(table, key) {
    const [deleted] = await this.r.multi().del(key).zRem(table, key).exec();
    return deleted ? STATUS.OK : STATUS.NOT_FOUND;
  }
}

module.exports = RedisDB;
