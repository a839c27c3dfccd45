"""YCSB on Redis: the server people use today to share data between
processes written in different languages.

-p redis.socket=PATH (a UNIX socket; else redis.host/redis.port). A record
is a hash (HSET key field value ...); the table's keys are also members of
a sorted set named after the table, all with score 0, so that ZRANGE
BYLEX gives them in key order for scans. An insert writes both in one
MULTI/EXEC; a scan fetches the keys, then the hashes in one pipeline.
"""
import redis

from ..db import DB, DBError, NOT_FOUND, OK


def _record(h):
    return {k.decode(): v for k, v in h.items()}


class RedisDB(DB):
    def init(self):
        sock = self.props.get("redis.socket")
        if sock:
            self.r = redis.Redis(unix_socket_path=sock)
        else:
            self.r = redis.Redis(host=self.props.get("redis.host", "localhost"),
                                 port=int(self.props.get("redis.port", "6379")))
        try:
            self.r.ping()
        except redis.RedisError as e:
            where = sock or f"{self.props.get('redis.host', 'localhost')}:" \
                            f"{self.props.get('redis.port', '6379')}"
            raise DBError(f"redis: no server at {where} ({e}); start redis-server or give "
                          "-p redis.socket=PATH") from None

    def cleanup(self):
        self.r.close()

    def read(self, table, key, fields):
        if fields is None:
            h = self.r.hgetall(key)
            return (OK, _record(h)) if h else (NOT_FOUND, None)
        fields = list(fields)
        vals = self.r.hmget(key, fields)
        if all(v is None for v in vals):
            return NOT_FOUND, None
        return OK, {f: v for f, v in zip(fields, vals) if v is not None}

    def scan(self, table, startkey, count, fields):
        keys = self.r.zrange(table, "[" + startkey, "+", bylex=True, offset=0, num=count)
        pipe = self.r.pipeline(transaction=False)
        for k in keys:
            if fields is None:
                pipe.hgetall(k)
            else:
                pipe.hmget(k, list(fields))
        rows = pipe.execute()
        if fields is None:
            return OK, [_record(h) for h in rows]
        fields = list(fields)
        return OK, [{f: v for f, v in zip(fields, vals) if v is not None} for vals in rows]

    def update(self, table, key, values):
        # One HSET, as YCSB's own Redis binding: it does not check that the
        # record exists (the workloads only update loaded keys).
        self.r.hset(key, mapping=values)
        return OK

    def insert(self, table, key, values):
        pipe = self.r.pipeline(transaction=True)
        pipe.hset(key, mapping=values)
        pipe.zadd(table, {key: 0})
        pipe.execute()
        return OK

    def delete(self, table, key):
        pipe = self.r.pipeline(transaction=True)
        pipe.delete(key)
        pipe.zrem(table, key)
        deleted, _ = pipe.execute()
        return OK if deleted else NOT_FOUND
