"""YCSB on an in-process map: the ceiling, what a plain dict gives.

A dict from key to record (a dict of bytes), and a SortedList of the keys
for scans. Nothing outlives the process and nothing is shared: each client
thread is a process of its own, so each holds a private copy of the table.
Each thread draws its keys from counters of its own, as if it were the
only client. A transaction run (-t) loads its table itself, in init(), before
the clock starts, with the workload's own insert path (the same keys and
values a load would write); memory.preload=false turns that off.
"""
import itertools
import random

from sortedcontainers import SortedList

from ..counters import AcknowledgedCounter, Counter
from ..db import DB, NOT_FOUND, OK
from ..measurements import Measurements
from ..workload import CoreWorkload, int_prop, record_count


class MemoryDB(DB):
    PRIVATE_TABLES = True       # each client thread its own table and counters

    def init(self):
        self._tables = {}
        run = self.props.get("dotransactions", "true").lower() != "false"
        if run and self.props.get("memory.preload", "true").lower() == "true":
            self._preload()

    def _preload(self):
        n = record_count(self.props)
        start = int_prop(self.props, "insertstart", "0")
        wl = CoreWorkload(self.props, random.Random(), Counter(start), AcknowledgedCounter(n),
                          Measurements())
        for _ in range(int_prop(self.props, "insertcount", str(n - start))):
            wl.do_insert(self)

    def _table(self, name):
        t = self._tables.get(name)
        if t is None:
            t = self._tables[name] = ({}, SortedList())
        return t

    def read(self, table, key, fields):
        rec = self._table(table)[0].get(key)
        if rec is None:
            return NOT_FOUND, None
        if fields is None:
            return OK, dict(rec)
        return OK, {f: rec[f] for f in fields if f in rec}

    def scan(self, table, startkey, count, fields):
        records, keys = self._table(table)
        out = []
        for k in itertools.islice(keys.irange(minimum=startkey), count):
            rec = records[k]
            out.append(dict(rec) if fields is None else {f: rec[f] for f in fields if f in rec})
        return OK, out

    def update(self, table, key, values):
        rec = self._table(table)[0].get(key)
        if rec is None:
            return NOT_FOUND
        rec.update(values)
        return OK

    def insert(self, table, key, values):
        records, keys = self._table(table)
        if key not in records:
            keys.add(key)
        records[key] = dict(values)
        return OK

    def delete(self, table, key):
        records, keys = self._table(table)
        if records.pop(key, None) is None:
            return NOT_FOUND
        keys.remove(key)
        return OK
