"""YCSB on LMDB (py-lmdb), the memory-mapped peer.

One environment (-p lmdb.path=DIR), one named database per table, the
record encoded by codec.py. lmdb.durability chooses the durability class:

    sync     LMDB's default: fdatasync of the data, then of the meta page,
             at every commit (survives power loss)
    nosync   MDB_NOSYNC | MDB_NOMETASYNC | MDB_WRITEMAP (survives process
             crashes, not power loss), uniheap's `memory` class

An update reads, changes and rewrites the record in one write transaction
(LMDB has one writer at a time, across processes).
"""
import itertools

import lmdb

from .. import codec
from ..db import DB, DBError, NOT_FOUND, OK


class LmdbDB(DB):
    def init(self):
        path = self.props.get("lmdb.path")
        if not path:
            raise DBError("lmdb: give the environment's folder with -p lmdb.path=DIR")
        durability = self.props.get("lmdb.durability", "sync")
        if durability not in ("sync", "nosync"):
            raise DBError(f"lmdb.durability={durability!r}: sync or nosync")
        nosync = durability == "nosync"
        try:
            self.env = lmdb.open(path, map_size=int(self.props.get("lmdb.mapsize", str(8 << 30))),
                                 max_dbs=16, sync=not nosync, metasync=not nosync,
                                 writemap=nosync, readahead=False)
        except lmdb.Error as e:
            raise DBError(f"lmdb: cannot open the environment in {path}: {e}") from None
        self._dbs = {}

    def cleanup(self):
        self.env.close()

    def _db(self, table):
        d = self._dbs.get(table)
        if d is None:
            d = self._dbs[table] = self.env.open_db(table.encode())
        return d

    def read(self, table, key, fields):
        with self.env.begin(db=self._db(table), buffers=True) as txn:
            data = txn.get(key.encode())
            if data is None:
                return NOT_FOUND, None
            return OK, codec.decode(data, fields)

    def scan(self, table, startkey, count, fields):
        with self.env.begin(db=self._db(table), buffers=True) as txn:
            cur = txn.cursor()
            if not cur.set_range(startkey.encode()):
                return OK, []
            return OK, [codec.decode(v, fields)
                        for v in itertools.islice(cur.iternext(keys=False), count)]

    def update(self, table, key, values):
        k = key.encode()
        with self.env.begin(db=self._db(table), write=True) as txn:
            data = txn.get(k)
            if data is None:
                return NOT_FOUND
            rec = codec.decode(data)
            rec.update(values)
            txn.put(k, codec.encode(rec))
        return OK

    def insert(self, table, key, values):
        with self.env.begin(db=self._db(table), write=True) as txn:
            txn.put(key.encode(), codec.encode(values))
        return OK

    def delete(self, table, key):
        with self.env.begin(db=self._db(table), write=True) as txn:
            return OK if txn.delete(key.encode()) else NOT_FOUND
