"""YCSB on uniheap, from Python.

The schema every language uses (bench/ycsb/README.md, "One table, every
language"): table T is a persistent sorted map with str keys under the
root "ycsb.T"; a record is an object of class ycsb.Record, with inline
bytes fields field0..field9 of capacity 100 (FORMAT.md 3.2: the values
live in the record, one object per record), when the workload has YCSB's
default fields and lengths, and a PMap (str -> bytes) per record
otherwise.

Reads and scans run in a block, so that a record is read as one snapshot
(as LMDB's read transactions and Redis's HGETALL give); an update of one
field is a single field write (atomic and durable on its own; if it
loses a conflict with another client it is redone as a block); inserts,
multi-field updates and deletes are blocks. Blocks that lose a conflict
with another client are re-run by heap.atomic(fn).
"""
import itertools
from operator import attrgetter

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
    """Records as ycsb.Record objects."""

    def __init__(self, heap):
        self.heap = heap
        self._getters = {}

    def new(self, values):
        return Record(self.heap, **values)

    def read(self, rec, fields):
        if fields is None:
            return uniheap.asdict(rec)
        fields = tuple(fields)
        get = self._getters.get(fields)
        if get is None:
            get = self._getters[fields] = attrgetter(*fields)
        vals = get(rec)
        return dict(zip(fields, vals)) if len(fields) > 1 else {fields[0]: vals}

    def update(self, rec, values):
        for f, v in values.items():
            setattr(rec, f, v)

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
        self.schema = (_RecordSchema if uses_record_class(self.props) else _MapSchema)(self.heap)
        # A whole Record is read at one instant by itself (no block).
        self._whole = uniheap.asdict if isinstance(self.schema, _RecordSchema) else None
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

    def _read(self, t, key, fields):
        rec = t.get(key)
        return None if rec is None else self.schema.read(rec, fields)

    def read(self, table, key, fields):
        t = self._tables.get(table) or self.table(table)
        if fields is None and self._whole:
            # No block: a lookup, then the whole record at one instant. A
            # record is freed only with the change that gives its key
            # another record or removes it, so one still there at the
            # second read was still the key's: the pair reads as one read
            # at that instant. A record freed in between: read in a block.
            try:
                rec = t.get(key)
                cells = None if rec is None else self._whole(rec)
            except uniheap.FreedObjectError:
                cells = self.heap.atomic(self._read, t, key, fields)
        else:
            cells = self.heap.atomic(self._read, t, key, fields)
        return (NOT_FOUND, None) if cells is None else (OK, cells)

    def _scan(self, t, start, count, fields):
        read = self.schema.read
        return [read(rec, fields) for _, rec in itertools.islice(t.items_from(start), count)]

    def scan(self, table, startkey, count, fields):
        return OK, self.heap.atomic(self._scan, self.table(table), startkey, count, fields)

    def _update(self, t, key, values):
        rec = t.get(key)
        if rec is None:
            return NOT_FOUND
        self.schema.update(rec, values)
        return OK

    def update(self, table, key, values):
        t = self.table(table)
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
        return self.heap.atomic(self._insert, self.table(table), key, values)

    def _delete(self, t, key):
        rec = t.pop(key, None)
        if rec is None:
            return NOT_FOUND
        self.schema.free(rec)
        return OK

    def delete(self, table, key):
        return self.heap.atomic(self._delete, self.table(table), key)
