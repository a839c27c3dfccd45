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
    printed to stderr (a binding's own message, e.g. a lost connection)."""

    def __init__(self, db, measurements):
        self.db = db
        self._m = measurements
        self._reported = set()

    def _measure(self, op, status, start, end):
        name = op if status == OK else op + "-FAILED"
        self._m.measure(name, (end - start) // 1000)
        self._m.report_status(op, status)

    def _failed(self, op, e):
        if op not in self._reported:
            self._reported.add(op)
            print(f"{op} failed in {type(self.db).__name__}: {type(e).__name__}: {e}",
                  file=sys.stderr, flush=True)
        return ERROR

    def _call(self, op, with_result, fn, *args):
        st = time.perf_counter_ns()
        try:
            r = fn(*args)
        except Exception as e:
            r = (self._failed(op, e), None) if with_result else self._failed(op, e)
        self._measure(op, r[0] if with_result else r, st, time.perf_counter_ns())
        return r

    def read(self, table, key, fields):
        return self._call("READ", True, self.db.read, table, key, fields)

    def scan(self, table, startkey, count, fields):
        return self._call("SCAN", True, self.db.scan, table, startkey, count, fields)

    def update(self, table, key, values):
        return self._call("UPDATE", False, self.db.update, table, key, values)

    def insert(self, table, key, values):
        return self._call("INSERT", False, self.db.insert, table, key, values)

    def delete(self, table, key):
        return self._call("DELETE", False, self.db.delete, table, key)
