"""The database interface of the port (site.ycsb.DB) and the wrapper that
times every call (site.ycsb.DBWrapper).

A binding subclasses DB. Records are dicts of field name (str) -> value
(bytes); `fields` is None for all fields or a collection of names. Every
call returns a status name (OK, NOT_FOUND, ERROR, ...), with the result
where there is one.
"""
import sys
import time

OK = "OK"
ERROR = "ERROR"
NOT_FOUND = "NOT_FOUND"
NOT_IMPLEMENTED = "NOT_IMPLEMENTED"
UNEXPECTED_STATE = "UNEXPECTED_STATE"
BAD_REQUEST = "BAD_REQUEST"


class DBError(Exception):
    """A binding cannot start (init) or stop (cleanup); the message says
    what is wrong and how to fix it."""


class DB:
    """One client thread's connection to a database."""

    def __init__(self, props):
        self.props = props

    def init(self):
        """Connect; called once per client thread before its first call."""

    def cleanup(self):
        """Disconnect; called once per client thread after its last call."""

    def read(self, table, key, fields):
        """(status, {field: bytes}) of one record."""
        raise NotImplementedError

    def scan(self, table, startkey, count, fields):
        """(status, [{field: bytes}, ...]): up to count records in key
        order from the first key >= startkey."""
        raise NotImplementedError

    def update(self, table, key, values):
        """Replace the given fields of an existing record: status."""
        raise NotImplementedError

    def insert(self, table, key, values):
        """Insert (or replace) a record: status."""
        raise NotImplementedError

    def delete(self, table, key):
        """Remove a record: status."""
        raise NotImplementedError


class DBWrapper:
    """Times each call of a DB and counts its return code, as YCSB's
    DBWrapper: a failed call's latency goes to "<OP>-FAILED". An exception
    from the binding counts as ERROR; the first one per operation is
    printed to stderr (a binding's own message, e.g. a lost connection).

    Each operation is a closure made once (_timed): the DB's bound method,
    the clock and the operation's counts of Measurements held in its
    cells, so that a call costs two clock reads and two dict updates
    around the DB's own call."""

    def __init__(self, db, measurements):
        self.db = db
        self._m = measurements
        self._reported = set()
        self.read = self._timed("READ", db.read, True)
        self.scan = self._timed("SCAN", db.scan, True)
        self.update = self._timed("UPDATE", db.update, False)
        self.insert = self._timed("INSERT", db.insert, False)
        self.delete = self._timed("DELETE", db.delete, False)

    def _failed(self, op, e):
        if op not in self._reported:
            self._reported.add(op)
            print(f"{op} failed in {type(self.db).__name__}: {type(e).__name__}: {e}",
                  file=sys.stderr, flush=True)
        return ERROR

    def _timed(self, op, fn, with_result):
        """The timed call of fn (the DB's method for op): its latency in
        whole microseconds under op (or op-FAILED), its status counted
        under op. The counts are Measurements' own dicts, made at the
        first call (an operation never called stays out of the report)."""
        m = self._m
        now = time.perf_counter_ns
        failed = self._failed
        lat = ret = None            # latencies of op, return codes of op
        ok = False                  # ret has an OK count

        def record(status, us):
            nonlocal lat, ret, ok
            if lat is None:
                lat = m.latency_counts(op)
                ret = m.return_counts(op)
            if status == OK:
                lat[us] = lat.get(us, 0) + 1
                ok = True
            else:
                m.measure(op + "-FAILED", us)
            ret[status] = ret.get(status, 0) + 1

        # The common case (OK after an OK) inline; anything else in record.
        if with_result:
            def call(*args):
                st = now()
                try:
                    r = fn(*args)
                except Exception as e:
                    r = (failed(op, e), None)
                us = (now() - st) // 1000
                status = r[0]
                if status is OK and ok:
                    lat[us] = lat.get(us, 0) + 1
                    ret[OK] += 1
                else:
                    record(status, us)
                return r
        else:
            def call(*args):
                st = now()
                try:
                    status = fn(*args)
                except Exception as e:
                    status = failed(op, e)
                us = (now() - st) // 1000
                if status is OK and ok:
                    lat[us] = lat.get(us, 0) + 1
                    ret[OK] += 1
                else:
                    record(status, us)
                return status
        return call
