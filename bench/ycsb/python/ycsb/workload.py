"""CoreWorkload of YCSB 0.17.0, ported: the properties it reads, the keys
it names, the values it writes, the operation mix it draws and how each
operation uses the database.

One CoreWorkload per client thread; the key counters are shared (see
counters.py) and passed in.
"""
import sys
import time

from . import db as dbmod
from .counters import AcknowledgedCounter, Counter, SharedAcknowledgedCounter, SharedCounter
from .generators import (ConstantIntegerGenerator, DiscreteGenerator, ScrambledZipfianGenerator,
                         SkewedLatestGenerator, UniformLongGenerator, ZipfianGenerator, fnvhash64)
from .values import deterministic_value, random_value, random_values, value_drawer

_INT_MAX = 2**31 - 1
#: key numbers whose names are memoized (a list of this many entries at
#: most): hashing a key number costs about half a microsecond in Python.
MEMO_MAX = 1 << 20


class WorkloadError(Exception):
    """A property the workload cannot use; the message names it."""


def bool_prop(props, name, default):
    # Java's Boolean.parseBoolean: "true" in any case, anything else false.
    return props.get(name, default).strip().lower() == "true"


def int_prop(props, name, default):
    v = props.get(name, default)
    try:
        return int(v)
    except ValueError:
        raise WorkloadError(f"property {name}={v!r} is not an integer") from None


def float_prop(props, name, default):
    v = props.get(name, default)
    try:
        return float(v)
    except ValueError:
        raise WorkloadError(f"property {name}={v!r} is not a number") from None


def record_count(props):
    """recordcount, with YCSB's rule that 0 (the default) means 2^31-1."""
    n = int_prop(props, "recordcount", "0")
    return n if n else _INT_MAX


def make_counters(props, shared):
    """(load key sequence, run insert key sequence) for the client's
    threads: shared-memory counters when they run as several processes."""
    start = int_prop(props, "insertstart", "0")
    n = record_count(props)
    if shared:
        return SharedCounter(start), SharedAcknowledgedCounter(n)
    return Counter(start), AcknowledgedCounter(n)


def operation_chooser(props, rng):
    """The discrete generator of the operation mix, in YCSB's order."""
    chooser = DiscreteGenerator(rng)
    for prop, default, op in (("readproportion", "0.95", "READ"),
                              ("updateproportion", "0.05", "UPDATE"),
                              ("insertproportion", "0.0", "INSERT"),
                              ("scanproportion", "0.0", "SCAN"),
                              ("readmodifywriteproportion", "0.0", "READMODIFYWRITE")):
        p = float_prop(props, prop, default)
        if p > 0:
            chooser.add_value(p, op)
    if not chooser.values:
        raise WorkloadError("every operation proportion is 0: nothing to run")
    return chooser


def _length_generator(props, rng, dist, lo, hi, what):
    if dist == "uniform":
        return UniformLongGenerator(rng, lo, hi)
    if dist == "zipfian":
        return ZipfianGenerator(rng, lo, hi)
    raise WorkloadError(f"{what}={dist!r} is not supported (uniform or zipfian)")


class CoreWorkload:
    def __init__(self, props, rng, keysequence, insertsequence, measurements):
        self.rng = rng
        self.measurements = measurements
        self.table = props.get("table", "usertable")
        self.fieldcount = int_prop(props, "fieldcount", "10")
        prefix = props.get("fieldnameprefix", "field")
        self.fieldnames = [f"{prefix}{i}" for i in range(self.fieldcount)]
        self.fieldlength = self._field_length_generator(props, rng)
        # Constant-length fields draw no length: all of a record's values
        # are made in one go (random_values).
        self._constlength = (self.fieldlength.value
                             if isinstance(self.fieldlength, ConstantIntegerGenerator) else None)
        self.recordcount = record_count(props)
        insertstart = int_prop(props, "insertstart", "0")
        insertcount = int_prop(props, "insertcount", str(self.recordcount - insertstart))
        if self.recordcount < insertstart + insertcount:
            raise WorkloadError(f"insertstart ({insertstart}) + insertcount ({insertcount}) "
                                f"exceeds recordcount ({self.recordcount})")
        self.zeropadding = int_prop(props, "zeropadding", "1")
        self.readallfields = bool_prop(props, "readallfields", "true")
        self.writeallfields = bool_prop(props, "writeallfields", "false")
        self.dataintegrity = bool_prop(props, "dataintegrity", "false")
        if self.dataintegrity and props.get("fieldlengthdistribution", "constant") != "constant":
            raise WorkloadError("dataintegrity=true needs fieldlengthdistribution=constant")
        self.orderedinserts = props.get("insertorder", "hashed") != "hashed"
        # A random value of constant length, drawn without a length draw.
        self._drawvalue = (value_drawer(rng, self._constlength)
                           if self._constlength is not None and not self.dataintegrity else None)
        self.keysequence = keysequence
        self.insertsequence = insertsequence
        self.operationchooser = operation_chooser(props, rng)
        self.keychooser = self._key_chooser(props, rng, insertstart, insertcount)
        self.fieldchooser = UniformLongGenerator(rng, 0, self.fieldcount - 1)
        self.scanlength = _length_generator(
            props, rng, props.get("scanlengthdistribution", "uniform"),
            int_prop(props, "minscanlength", "1"), int_prop(props, "maxscanlength", "1000"),
            "scanlengthdistribution")
        self.insertion_retry_limit = int_prop(props, "core_workload_insertion_retry_limit", "0")
        self.insertion_retry_interval = int_prop(props, "core_workload_insertion_retry_interval", "3")
        # Key names by key number, made at a run's first use (hot keys
        # repeat; a load names each key once and keeps none): a list,
        # indexed without hashing, for the numbers below MEMO_MAX.
        self._keynames = [None] * min(self.recordcount, MEMO_MAX)
        self._ops = {"READ": self.do_transaction_read, "UPDATE": self.do_transaction_update,
                     "INSERT": self.do_transaction_insert, "SCAN": self.do_transaction_scan,
                     "READMODIFYWRITE": self.do_transaction_read_modify_write}
        # do_transaction draws what operationchooser.next_value() draws (its
        # shares, in its order, from the same rng), mapped to the methods.
        self._rand = rng.random
        self._opshares = tuple((pw, self._ops[op]) for pw, op in self.operationchooser._shares)
        self._lastop = self._ops[self.operationchooser.values[-1][1]]
        # The fields a read asks for: None (all), all by name (to verify
        # them) or one chosen per read.
        self._readall = self.readallfields and not self.dataintegrity

    @staticmethod
    def _field_length_generator(props, rng):
        dist = props.get("fieldlengthdistribution", "constant")
        length = int_prop(props, "fieldlength", "100")
        if dist == "constant":
            return ConstantIntegerGenerator(length)
        return _length_generator(props, rng, dist, int_prop(props, "minfieldlength", "1"), length,
                                 "fieldlengthdistribution")

    def _key_chooser(self, props, rng, insertstart, insertcount):
        dist = props.get("requestdistribution", "uniform")
        if dist == "uniform":
            return UniformLongGenerator(rng, insertstart, insertstart + insertcount - 1)
        if dist == "zipfian":
            # Room for the keys the run will insert, so that the popular keys
            # stay the same as the key space grows (YCSB's 2x fudge factor);
            # a key not inserted yet is drawn again (next_keynum).
            opcount = int_prop(props, "operationcount", "0")
            insertproportion = float_prop(props, "insertproportion", "0.0")
            newkeys = int(opcount * insertproportion * 2.0)
            return ScrambledZipfianGenerator(rng, insertstart, insertstart + insertcount + newkeys)
        if dist == "latest":
            return SkewedLatestGenerator(rng, self.insertsequence)
        raise WorkloadError(f"requestdistribution={dist!r} is not supported by this port "
                            "(uniform, zipfian or latest)")

    # ---- keys and values ----

    def _next_key(self):
        """build_key_name(next_keynum()), in one call."""
        limit = self.insertsequence.last_value()
        keynum = self.keychooser.next_value()
        while keynum > limit:
            keynum = self.keychooser.next_value()
            limit = self.insertsequence.last_value()
        names = self._keynames
        if 0 <= keynum < len(names):
            name = names[keynum]
            if name is not None:
                return name
        return self._new_key_name(keynum)

    def build_key_name(self, keynum):
        names = self._keynames
        if 0 <= keynum < len(names):
            name = names[keynum]
            if name is not None:
                return name
        return self._new_key_name(keynum)

    def _make_key_name(self, keynum):
        value = str(keynum if self.orderedinserts else fnvhash64(keynum))
        return "user" + "0" * (self.zeropadding - len(value)) + value

    def _new_key_name(self, keynum):
        """The key name of keynum, made, and kept when 0 <= keynum <
        MEMO_MAX (the list grows to the keys a run inserts, by 4096)."""
        name = self._make_key_name(keynum)
        if 0 <= keynum < MEMO_MAX:
            names = self._keynames
            if keynum >= len(names):
                names.extend([None] * (min(keynum + 4096, MEMO_MAX) - len(names)))
            names[keynum] = name
        return name

    def _value(self, key, field):
        if self.dataintegrity:
            return deterministic_value(key, field, self.fieldlength.next_value())
        return random_value(self.rng, self.fieldlength.next_value())

    def build_values(self, key):
        if self._constlength is not None and not self.dataintegrity:
            return random_values(self.rng, self.fieldnames, self._constlength)
        return {f: self._value(key, f) for f in self.fieldnames}

    def build_single_value(self, key):
        f = self.fieldnames[self.fieldchooser.next_value()]
        if self._drawvalue is not None:
            return {f: self._drawvalue()}
        return {f: self._value(key, f)}

    def _one_field(self):
        return (self.fieldnames[self.fieldchooser.next_value()],)

    # ---- load ----

    def do_insert(self, db):
        """Insert the next record of the load; False if it failed."""
        keynum = self.keysequence.next_value()
        key = self._make_key_name(keynum)   # each once: not kept
        values = self.build_values(key)
        tries = 0
        while True:
            status = db.insert(self.table, key, values)
            if status == dbmod.OK:
                return True
            tries += 1
            if tries > self.insertion_retry_limit:
                print(f"Error inserting, not retrying any more. number of attempts: {tries}"
                      f"Insertion Retry Limit: {self.insertion_retry_limit}", file=sys.stderr)
                return False
            print(f"Retrying insertion, retry count: {tries}", file=sys.stderr)
            time.sleep(self.insertion_retry_interval * (0.8 + 0.4 * self.rng.random()))

    # ---- run ----

    def do_transaction(self, db):
        val = self._rand()
        for pw, op in self._opshares:
            if val < pw:
                op(db)
                return True
            val -= pw
        self._lastop(db)
        return True

    def next_keynum(self):
        limit = self.insertsequence.last_value()
        keynum = self.keychooser.next_value()
        while keynum > limit:
            keynum = self.keychooser.next_value()
            limit = self.insertsequence.last_value()
        return keynum

    def verify_row(self, key, cells):
        st = time.perf_counter_ns()
        status = dbmod.OK
        if cells:
            for f, v in cells.items():
                if v != deterministic_value(key, f, self.fieldlength.next_value()):
                    status = dbmod.UNEXPECTED_STATE
                    break
        else:
            status = dbmod.ERROR            # no data is never valid
        self.measurements.measure("VERIFY", (time.perf_counter_ns() - st) // 1000)
        self.measurements.report_status("VERIFY", status)

    def do_transaction_read(self, db):
        key = self._next_key()
        if self._readall:
            db.read(self.table, key, None)
            return
        if not self.readallfields:
            fields = self._one_field()
        elif self.dataintegrity:
            fields = self.fieldnames
        else:
            fields = None
        _, cells = db.read(self.table, key, fields)
        if self.dataintegrity:
            self.verify_row(key, cells)

    def do_transaction_read_modify_write(self, db):
        key = self._next_key()
        fields = None if self.readallfields else self._one_field()
        values = self.build_values(key) if self.writeallfields else self.build_single_value(key)
        st = time.perf_counter_ns()
        _, cells = db.read(self.table, key, fields)
        db.update(self.table, key, values)
        en = time.perf_counter_ns()
        if self.dataintegrity:
            self.verify_row(key, cells)
        self.measurements.measure("READ-MODIFY-WRITE", (en - st) // 1000)

    def do_transaction_scan(self, db):
        key = self._next_key()
        length = self.scanlength.next_value()
        fields = None if self.readallfields else self._one_field()
        db.scan(self.table, key, length, fields)

    def do_transaction_update(self, db):
        key = self._next_key()
        values = self.build_values(key) if self.writeallfields else self.build_single_value(key)
        db.update(self.table, key, values)

    def do_transaction_insert(self, db):
        keynum = self.insertsequence.next_value()
        try:
            key = self.build_key_name(keynum)
            db.insert(self.table, key, self.build_values(key))
        finally:
            self.insertsequence.acknowledge(keynum)
