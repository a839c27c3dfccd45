"""YCSB on uniheap, from Python.

The schema every language uses (bench/ycsb/README.md, "One table, every
language"): table T is a persistent sorted map with str keys under the
root "ycsb.T"; a record is an object of class ycsb.Record, with inline
bytes fields field0..field9 of capacity 100 (FORMAT.md 3.2: the values
live in the record, one object per record), when the workload has YCSB's
default fields and lengths, and a PMap (str -> bytes) per record
otherwise.

With Records, every operation is one call of the table's sorted map,
which does the lookup and the record's fields in C: a read is
get_fields (the record at one instant, no block), an update of one field
set_field (atomic and durable on its own, re-run inside libuniheap after
a lost conflict), a scan scan_fields in a block (one snapshot, as LMDB's
read transactions and Redis's HGETALL give), an insert put_record (the
new record and the put in one step, atomic and durable on its own, the
old record freed in it; redone in a block after a lost conflict). With PMap records, reads and scans run in a block and go through
proxies. Multi-field updates and deletes are blocks. Blocks that lose a
conflict with another client are re-run by heap.atomic(fn).
"""
import itertools

import uniheap

from ..db import DB, DBError, NOT_FOUND, OK

ROOT_PREFIX = "ycsb."

#: the capacity of Record's fields: YCSB's default fieldlength
FIELD_MAX = 100


class Record(uniheap.PObject, name="ycsb.Record"):
    field0 = uniheap.bytes_(max=FIELD_MAX)
    field1 = uniheap.bytes_(max=FIELD_MAX)
    field2 = uniheap.bytes_(max=FIELD_MAX)
    field3 = uniheap.bytes_(max=FIELD_MAX)
    field4 = uniheap.bytes_(max=FIELD_MAX)
    field5 = uniheap.bytes_(max=FIELD_MAX)
    field6 = uniheap.bytes_(max=FIELD_MAX)
    field7 = uniheap.bytes_(max=FIELD_MAX)
    field8 = uniheap.bytes_(max=FIELD_MAX)
    field9 = uniheap.bytes_(max=FIELD_MAX)


def uses_record_class(props):
    """True when the workload's fields fit Record's (YCSB's defaults: ten
    fields named field0..field9 of at most 100 bytes)."""
    prefix = props.get("fieldnameprefix", "field")
    return (int(props.get("fieldcount", "10")) == 10 and prefix == "field" and
            int(props.get("fieldlength", str(FIELD_MAX))) <= FIELD_MAX)


class _RecordSchema:
    """Records as ycsb.Record objects: the table's sorted map reads and
    writes them itself (UniheapDB); only a delete frees one here."""

    def __init__(self, heap):
        self.heap = heap

    def free(self, rec):
        self.heap.free(rec)             # its values are inside it


class _MapSchema:
    """Records as one PMap (field name -> bytes) each."""

    def __init__(self, heap):
        self.heap = heap

    def new(self, values):
        return uniheap.PMap(self.heap, key=str, data=values)

    def read(self, rec, fields):
        if fields is None:
            return dict(rec.items())
        return {f: rec[f] for f in fields if f in rec}

    def update(self, rec, values):
        for f, v in values.items():
            rec[f] = v

    def free(self, rec):
        rec.clear()
        self.heap.free(rec)


class UniheapDB(DB):
    def init(self):
        try:
            self.heap = uniheap.connect(self.props.get("uniheap.socket") or None)
        except uniheap.Error as e:
            raise DBError(f"uniheap: cannot connect to heapd ({e}); start heapd and set "
                          "UNIHEAP_SOCKET or -p uniheap.socket=PATH") from None
        self.records = uses_record_class(self.props)
        self.schema = (_RecordSchema if self.records else _MapSchema)(self.heap)
        self._tables = {}

    def cleanup(self):
        self.heap.close()

    def table(self, name):
        """The sorted map of table name, created (once, atomically) if the
        heap has none yet."""
        t = self._tables.get(name)
        if t is None:
            t = self._tables[name] = self.heap.atomic(self._get_or_create, ROOT_PREFIX + name)
        return t

    def _get_or_create(self, root):
        t = self.heap.roots.get(root)
        if t is None:
            t = uniheap.PSortedMap(self.heap, key=str)
            self.heap.roots[root] = t
        return t

    # ---- operations ----
    # With Records, each operation is one call of the sorted map
    # (get_fields, set_field, scan_fields, put_record): the lookup and the
    # record's fields in C, no proxy made. Records as PMaps go through
    # proxies (the schema classes above).

    def _read(self, t, key, fields):
        rec = t.get(key)
        return None if rec is None else self.schema.read(rec, fields)

    def read(self, table, key, fields):
        t = self._tables.get(table) or self.table(table)
        if self.records:
            # The key's record at one instant, without a block.
            cells = t.get_fields(key)
            if cells is not None and fields is not None:
                cells = {f: cells[f] for f in fields if f in cells}
        else:
            cells = self.heap.atomic(self._read, t, key, fields)
        return (NOT_FOUND, None) if cells is None else (OK, cells)

    def _scan(self, t, start, count, fields):
        read = self.schema.read
        return [read(rec, fields) for _, rec in itertools.islice(t.items_from(start), count)]

    def scan(self, table, startkey, count, fields):
        t = self._tables.get(table) or self.table(table)
        if not self.records:
            return OK, self.heap.atomic(self._scan, t, startkey, count, fields)
        # In a block: the records are one snapshot.
        rows = self.heap.atomic(t.scan_fields, startkey, count)
        if fields is not None:
            rows = [{f: r[f] for f in fields if f in r} for r in rows]
        return OK, rows

    def _update(self, t, key, values):
        rec = t.get(key)
        if rec is None:
            return NOT_FOUND
        self.schema.update(rec, values)
        return OK

    def _set_fields(self, t, key, values):
        for f, v in values.items():
            if not t.set_field(key, f, v):
                return NOT_FOUND
        return OK

    def update(self, table, key, values):
        t = self._tables.get(table) or self.table(table)
        if self.records:
            if len(values) == 1:    # one field write: atomic and durable alone
                for f, v in values.items():
                    return OK if t.set_field(key, f, v) else NOT_FOUND
            return self.heap.atomic(self._set_fields, t, key, values)
        if len(values) == 1:        # one field write: atomic and durable alone
            try:
                return self._update(t, key, values)
            except uniheap.Conflict:
                pass                # another client had the record: as a block, retried
        return self.heap.atomic(self._update, t, key, values)

    def _insert(self, t, key, values):
        old = t.get(key)
        t[key] = self.schema.new(values)
        if old is not None:
            self.schema.free(old)
        return OK

    def insert(self, table, key, values):
        t = self._tables.get(table) or self.table(table)
        if self.records:
            # The new record and the put in one step, atomic and durable on
            # its own; the record the key held (only the table refers to
            # it) is freed in that step. Redone as a block, re-run until it
            # commits, after a lost conflict with another client.
            try:
                t.put_record(key, Record, values, True)
            except uniheap.Conflict:
                self.heap.atomic(t.put_record, key, Record, values, True)
            return OK
        return self.heap.atomic(self._insert, t, key, values)

    def _delete(self, t, key):
        rec = t.pop(key, None)
        if rec is None:
            return NOT_FOUND
        self.schema.free(rec)
        return OK

    def delete(self, table, key):
        return self.heap.atomic(self._delete, self.table(table), key)
