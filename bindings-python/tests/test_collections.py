"""Persistent data types through their Python protocols: PMap
(MutableMapping), PSortedMap (ordered, ranges both ways), PList
(MutableSequence) and PArray (fixed-length Sequence)."""

import collections.abc
import math
import random

import pytest

import uniheap


class Thing(uniheap.PObject, name="t.coll.Thing"):
    n = uniheap.i64()


def scalar_values():
    return [None, True, False, 0, -1, 2**63 - 1, -2**63, 1.5, -0.0, float("inf"),
            "", "ünï ✓ 🐍", "nul\x00in", b"", b"\x00\xff\x00"]


def same_value(got, want):
    """Equal and of the same Python type (True is not 1, 1.0 is not 1)."""
    if isinstance(want, float) and math.isnan(want):
        return isinstance(got, float) and math.isnan(got)
    return type(got) is type(want) and got == want and (
        not isinstance(want, float) or math.copysign(1, got) == math.copysign(1, want))


KEYS = {
    str: ["", "a", "b", "ünï ✓", "k" * 4096, "with\x00nul"],
    bytes: [b"", b"a", b"\x00", b"\x00\x00", b"\xff" * 100, bytes(range(256))],
    int: [0, 1, -1, 2**63 - 1, -2**63, 12345678901],
}


# ---- PMap ----

def test_pmap_is_a_mutable_mapping(heap):
    m = uniheap.PMap(heap)
    assert isinstance(m, collections.abc.MutableMapping)
    assert isinstance(m, uniheap.Proxy)
    assert m.key_type is str


@pytest.mark.parametrize("ktype", [str, bytes, int], ids=["str", "bytes", "int"])
def test_pmap_protocol(heap, ktype):
    m = uniheap.PMap(heap, key=ktype)
    assert m.key_type is ktype
    keys = KEYS[ktype]
    model = {}
    assert len(m) == 0 and list(m) == []
    for i, k in enumerate(keys):
        m[k] = i
        model[k] = i
    assert len(m) == len(keys)
    for k in keys:
        assert k in m
        assert m[k] == model[k]
    assert sorted(m, key=repr) == sorted(model, key=repr)
    assert sorted(m.items(), key=repr) == sorted(model.items(), key=repr)
    assert sorted(m.values()) == sorted(model.values())
    assert set(m.keys()) == set(model)
    assert dict(m) == model
    # replace
    m[keys[0]] = "replaced"
    assert m[keys[0]] == "replaced" and len(m) == len(keys)
    model[keys[0]] = "replaced"
    # get / missing
    missing = {str: "missing", bytes: b"missing", int: 999}[ktype]
    assert missing not in m
    assert m.get(missing) is None
    assert m.get(missing, 7) == 7
    with pytest.raises(KeyError):
        m[missing]
    with pytest.raises(KeyError):
        del m[missing]
    # setdefault
    assert m.setdefault(missing, "dflt") == "dflt"
    assert m.setdefault(missing, "other") == "dflt"
    model[missing] = "dflt"
    # pop
    assert m.pop(missing) == "dflt"
    del model[missing]
    assert m.pop(missing, "gone") == "gone"
    with pytest.raises(KeyError):
        m.pop(missing)
    # update
    extra = {str: {"u1": 1, "u2": 2}, bytes: {b"u1": 1, b"u2": 2}, int: {-50: 1, 50: 2}}[ktype]
    m.update(extra)
    model.update(extra)
    m.update(list(extra.items()))
    assert dict(m) == model
    # del
    del m[keys[1]]
    del model[keys[1]]
    assert keys[1] not in m
    assert dict(m) == model and len(m) == len(model)
    # popitem until empty
    seen = {}
    while len(m):
        k, v = m.popitem()
        seen[k] = v
    assert seen == model
    with pytest.raises(KeyError):
        m.popitem()
    m.update(extra)
    m.clear()
    assert len(m) == 0 and dict(m) == {}


def test_pmap_value_types(heap):
    m = uniheap.PMap(heap)
    values = scalar_values()
    t = Thing(heap, n=3)
    for i, v in enumerate(values):
        m[f"v{i}"] = v
    m["obj"] = t
    m["nan"] = float("nan")
    big = bytes(range(256)) * 4096          # 1 MiB
    m["big"] = big
    assert m["big"] == big
    for i, v in enumerate(values):
        got = m[f"v{i}"]
        assert same_value(got, v), (i, v, got)
    assert m["obj"] == t and isinstance(m["obj"], Thing) and m["obj"].n == 3
    assert math.isnan(m["nan"])


def test_pmap_nested_collections(heap):
    m = uniheap.PMap(heap)
    inner = uniheap.PMap(heap, key=int)
    inner[1] = "one"
    lst = uniheap.PList(heap, [1, 2, 3])
    m["inner"] = inner
    m["list"] = lst
    assert isinstance(m["inner"], uniheap.PMap) and m["inner"][1] == "one"
    assert m["inner"] == inner
    assert list(m["list"]) == [1, 2, 3]


def test_pmap_initial_data(heap):
    m = uniheap.PMap(heap, data={"a": 1, "b": 2})
    assert dict(m) == {"a": 1, "b": 2}
    m2 = uniheap.PMap(heap, key=int, data=[(1, "x"), (2, "y")])
    assert dict(m2) == {1: "x", 2: "y"}


def test_pmap_many_entries(heap):
    """Enough entries to make the table grow several times, then shrink
    by deletes; random operations against a dict model."""
    rng = random.Random(1234)
    m = uniheap.PMap(heap, key=int)
    model = {}
    for i in range(3000):
        k = rng.randrange(-2000, 2000)
        op = rng.random()
        if op < 0.65:
            v = rng.choice([i, f"s{i}", float(i), None, True])
            m[k] = v
            model[k] = v
        elif op < 0.9:
            if k in model:
                del m[k]
                del model[k]
            else:
                with pytest.raises(KeyError):
                    del m[k]
        else:
            assert m.get(k, "absent") == model.get(k, "absent")
    assert len(m) == len(model)
    assert dict(m) == model
    keys = list(m)
    assert len(keys) == len(set(keys)) == len(model)
    m.check()


def test_pmap_in_blocks(heap):
    m = uniheap.PMap(heap)
    m["keep"] = 1
    with pytest.raises(LookupError):
        with heap.atomic():
            m["keep"] = 2
            m["new"] = 3
            del m["keep"]
            raise LookupError("roll back")
    assert dict(m) == {"keep": 1}
    with heap.atomic():
        m["a"] = 1
        m["b"] = 2
        assert dict(m) == {"keep": 1, "a": 1, "b": 2}   # own writes
    assert dict(m) == {"keep": 1, "a": 1, "b": 2}


def test_map_reads_outside_blocks_are_optimistic(heap):
    """A get outside a block takes no block (no commit, empty or not): it
    is answered optimistically; inside a block it joins the block."""
    m, sm = uniheap.PMap(heap), uniheap.PSortedMap(heap, key=str)
    m["a"] = sm["a"] = 1
    before = heap.stats()
    assert m["a"] == 1 and sm["a"] == 1 and "b" not in m and len(sm) == 1
    after = heap.stats()
    assert after["opt_reads"] - before["opt_reads"] == 4
    assert after["commits"] + after["empty_commits"] == \
        before["commits"] + before["empty_commits"]
    with heap.atomic():
        assert m["a"] == 1
    assert heap.stats()["opt_reads"] == after["opt_reads"]


@pytest.mark.parametrize("cls", [uniheap.PMap, uniheap.PSortedMap])
def test_map_get_method(heap, cls):
    """get() is MapBase's (one C call), with Mapping.get's answers: the
    value, else the default; a key of the wrong type still raises."""
    m = cls(heap, key=str, data={"a": 1, "b": b"x", "n": None})
    assert type(m).get is uniheap._uniheap.MapBase.get
    assert m.get("a") == 1 and m.get("b") == b"x" and m.get("n", 5) is None
    assert m.get("zz") is None and m.get("zz", 7) == 7
    default = object()
    assert m.get("zz", default) is default
    with pytest.raises(TypeError):
        m.get(1)
    with pytest.raises(TypeError):
        m.get()
    with pytest.raises(TypeError):
        m.get("a", 1, 2)
    with heap.atomic():
        m["c"] = 3
        assert m.get("c") == 3 and m.get("d", 4) == 4
    before = heap.stats()
    m.get("a"), m.get("zz")
    assert heap.stats()["opt_reads"] - before["opt_reads"] == 2


def test_pmap_wrong_key_type(heap):
    m = uniheap.PMap(heap, key=str)
    m["s"] = 1
    for bad in (1, b"s", 1.5, None, ("t",)):
        with pytest.raises(TypeError):     # uniheap.TypeMismatch is a TypeError
            m[bad] = 2
        with pytest.raises((TypeError, KeyError)):
            m[bad]
    mi = uniheap.PMap(heap, key=int)
    for bad in ("1", b"1", 1.5):
        with pytest.raises(TypeError):
            mi[bad] = 1
    with pytest.raises((ValueError, OverflowError, TypeError)):
        mi[2**64] = 1
    assert dict(m) == {"s": 1} and len(mi) == 0


def test_pmap_bad_key_type_at_creation(heap):
    for bad in (float, list, dict):
        with pytest.raises((TypeError, ValueError)):
            uniheap.PMap(heap, key=bad)


def test_pmap_key_too_long(heap):
    m = uniheap.PMap(heap)
    m["k" * 4096] = 1                      # exactly the limit
    with pytest.raises(ValueError):        # uniheap.InvalidValue
        m["k" * 4097] = 1
    mb = uniheap.PMap(heap, key=bytes)
    with pytest.raises(ValueError):
        mb[b"\x00" * 5000] = 1
    assert len(m) == 1 and len(mb) == 0


def test_pmap_bad_values(heap):
    m = uniheap.PMap(heap)
    for bad in (object(), [1], {"a": 1}, {1}, 1j):
        with pytest.raises(TypeError):
            m["x"] = bad
    with pytest.raises((ValueError, OverflowError)):
        m["x"] = 2**63
    assert "x" not in m


# ---- PSortedMap ----

def test_psortedmap_order(heap):
    rng = random.Random(7)
    keys = list(range(-300, 300, 3))
    rng.shuffle(keys)
    sm = uniheap.PSortedMap(heap, key=int)
    assert isinstance(sm, uniheap.PMap)
    assert isinstance(sm, collections.abc.MutableMapping)
    for k in keys:
        sm[k] = k * 10
    assert list(sm) == sorted(keys)
    assert list(sm.items()) == [(k, k * 10) for k in sorted(keys)]
    assert list(sm.values()) == [k * 10 for k in sorted(keys)]
    assert sm.first() == (-300, -3000)
    assert sm.last() == (297, 2970)
    for k in keys[:100]:
        del sm[k]
    rest = sorted(keys[100:])
    assert list(sm) == rest
    assert sm.first()[0] == rest[0] and sm.last()[0] == rest[-1]
    sm.check()


def test_psortedmap_ranges(heap):
    sm = uniheap.PSortedMap(heap, key=int)
    for k in range(0, 100, 10):            # 0, 10, ..., 90
        sm[k] = str(k)
    ks = lambda it: [k for k, _ in it]
    # items_from: first key >= start (reverse: <= start)
    assert ks(sm.items_from(30)) == [30, 40, 50, 60, 70, 80, 90]
    assert ks(sm.items_from(35)) == [40, 50, 60, 70, 80, 90]
    assert ks(sm.items_from(35, reverse=True)) == [30, 20, 10, 0]
    assert ks(sm.items_from(30, reverse=True)) == [30, 20, 10, 0]
    assert ks(sm.items_from()) == list(range(0, 100, 10))
    assert ks(sm.items_from(reverse=True)) == list(range(90, -1, -10))
    assert ks(sm.items_from(1000)) == []
    assert ks(sm.items_from(-1, reverse=True)) == []
    assert list(sm.items_from(40))[0] == (40, "40")
    # range: start <= k < stop; reverse: start >= k > stop
    assert ks(sm.range(20, 50)) == [20, 30, 40]
    assert ks(sm.range(21, 50)) == [30, 40]
    assert ks(sm.range(20, 51)) == [20, 30, 40, 50]
    assert ks(sm.range(50, 20, reverse=True)) == [50, 40, 30]
    assert ks(sm.range(49, 20, reverse=True)) == [40, 30]
    assert ks(sm.range(None, 25)) == [0, 10, 20]
    assert ks(sm.range(75, None)) == [80, 90]
    assert ks(sm.range(None, 65, reverse=True)) == [90, 80, 70]
    assert ks(sm.range(25, None, reverse=True)) == [20, 10, 0]
    assert ks(sm.range()) == list(range(0, 100, 10))
    assert ks(sm.range(50, 50)) == []
    assert ks(sm.range(60, 40)) == []


def test_psortedmap_str_and_bytes_order(heap):
    words = ["pear", "apple", "", "äpfel", "Zebra", "apple pie", "ünï", "a\x00b", "🐍", "z"]
    sm = uniheap.PSortedMap(heap, key=str)
    for w in words:
        sm[w] = len(w)
    # UTF-8 byte order is code point order, which is Python's str order
    assert list(sm) == sorted(words)
    assert [k for k, _ in sm.range("apple", "pear")] == [w for w in sorted(words)
                                                        if "apple" <= w < "pear"]
    assert [k for k, _ in sm.items_from("b", reverse=True)] == [
        w for w in sorted(words, reverse=True) if w <= "b"]
    bm = uniheap.PSortedMap(heap, key=bytes)
    bkeys = [b"\xff", b"\x00", b"\x00\x00", b"", b"a", b"\x7f\x80", b"ab"]
    for b in bkeys:
        bm[b] = b
    assert list(bm) == sorted(bkeys)
    assert list(bm.items()) == [(b, b) for b in sorted(bkeys)]


def test_psortedmap_int_extremes(heap):
    sm = uniheap.PSortedMap(heap, key=int)
    for k in (2**63 - 1, -2**63, 0, -1, 1):
        sm[k] = k
    assert list(sm) == [-2**63, -1, 0, 1, 2**63 - 1]   # signed, not unsigned order
    assert [k for k, _ in sm.range(-1, 2)] == [-1, 0, 1]


def test_psortedmap_empty_and_protocol(heap):
    sm = uniheap.PSortedMap(heap, key=bytes)
    with pytest.raises(KeyError):
        sm.first()
    with pytest.raises(KeyError):
        sm.last()
    assert list(sm.range()) == [] and list(sm.items_from(reverse=True)) == []
    sm[b"b"] = 2
    sm[b"a"] = 1
    assert sm.get(b"c") is None
    assert sm.setdefault(b"c", 3) == 3
    assert sm.pop(b"b") == 2
    with pytest.raises(KeyError):
        sm[b"b"]
    assert list(sm.items()) == [(b"a", 1), (b"c", 3)]
    assert sm.key_type is bytes
    with pytest.raises(TypeError):
        sm["str"] = 1


def test_psortedmap_many_against_model(heap):
    rng = random.Random(99)
    sm = uniheap.PSortedMap(heap, key=str)
    model = {}
    for i in range(2500):
        k = f"key{rng.randrange(1500):05d}"
        if rng.random() < 0.7:
            sm[k] = i
            model[k] = i
        elif k in model:
            assert sm.pop(k) == model.pop(k)
    assert list(sm.items()) == sorted(model.items())
    lo, hi = "key00300", "key01100"
    assert list(sm.range(lo, hi)) == [(k, v) for k, v in sorted(model.items()) if lo <= k < hi]
    assert list(sm.range(hi, lo, reverse=True)) == [
        (k, v) for k, v in sorted(model.items(), reverse=True) if lo < k <= hi]
    sm.check()


def _single_steps(model, last, reverse):
    """The entry one scan step after `last` in the map as it is now."""
    after = [k for k in model if last is None or (k < last if reverse else k > last)]
    if not after:
        return None
    k = max(after) if reverse else min(after)
    return k, model[k]


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("in_block", [False, True])
def test_psortedmap_scan_sees_own_writes(heap, reverse, in_block):
    """A scan reads entries a batch at a time (from one leaf), yet between
    its steps this process's puts, removes and replaces show as they would
    to single steps: each step gives the next key of the map as it is then.
    The keys span many leaves, and writes land just ahead of the scan, far
    ahead, and behind it."""
    rng = random.Random(7 + reverse + 2 * in_block)
    sm = uniheap.PSortedMap(heap, key=int)
    model = {}
    for k in range(0, 2000, 4):
        sm[k] = model[k] = f"v{k}"

    def scan():
        it = sm.items_from(reverse=reverse)
        last, steps = None, 0
        while True:
            want = _single_steps(model, last, reverse)
            got = next(it, None)
            assert got == want, f"step {steps} after {last}"
            if got is None:
                return steps
            last, steps = got[0], steps + 1
            for _ in range(rng.randrange(3)):          # 0-2 writes per step
                near = last + rng.choice([-1, 1]) * rng.choice([1, 2, 3, 5, 40, 400])
                op = rng.random()
                if op < 0.45:
                    sm[near] = model[near] = f"w{steps}"
                elif op < 0.8 and near in model:
                    del sm[near]
                    del model[near]
                elif model:
                    k = rng.choice(list(model))
                    sm[k] = model[k] = f"r{steps}"

    if in_block:
        with heap.atomic():
            steps = scan()
    else:
        steps = scan()
    assert steps > 400
    assert list(sm.items()) == sorted(model.items())
    sm.check()


def test_psortedmap_scan_reads_ahead_only_what_it_needs(heap):
    """Stopping early, keys-only and values-only scans, and a range's stop
    key inside a batch: each gives exactly its entries."""
    sm = uniheap.PSortedMap(heap, key=int)
    for k in range(500):
        sm[k] = k * 10
    it = sm.items_from(100)
    assert [next(it) for _ in range(3)] == [(100, 1000), (101, 1010), (102, 1020)]
    assert list(sm.keys())[:70] == list(range(70))
    assert list(sm.values())[-5:] == [4950, 4960, 4970, 4980, 4990]
    assert list(sm.range(10, 47)) == [(k, k * 10) for k in range(10, 47)]
    assert list(sm.range(300, 290, reverse=True)) == [(k, k * 10) for k in range(300, 290, -1)]
    it = sm.range(0, 400)
    assert next(it) == (0, 0)
    for k in list(sm.keys()):                  # the rest of its batch is gone now
        del sm[k]
    assert next(it, None) is None


# ---- PList ----

def test_plist_protocol(heap):
    pl = uniheap.PList(heap)
    assert isinstance(pl, collections.abc.MutableSequence)
    assert len(pl) == 0 and list(pl) == []
    pl.append(1)
    pl.append("two")
    pl.append(None)
    assert list(pl) == [1, "two", None]
    pl.insert(0, b"zero")
    pl.insert(len(pl), 3.0)
    pl.insert(2, True)
    assert list(pl) == [b"zero", 1, True, "two", None, 3.0]
    assert pl[0] == b"zero" and pl[2] is True
    assert pl[-1] == 3.0 and pl[-6] == b"zero"
    pl[1] = "one"
    pl[-1] = 4.5
    assert list(pl) == [b"zero", "one", True, "two", None, 4.5]
    with pytest.raises(IndexError):
        pl[6]
    with pytest.raises(IndexError):
        pl[-7]
    with pytest.raises(IndexError):
        pl[6] = 1
    assert pl.pop() == 4.5
    assert pl.pop(0) == b"zero"
    del pl[1]
    assert list(pl) == ["one", "two", None]
    assert "two" in pl and "zzz" not in pl
    assert pl.index("two") == 1
    pl.extend([7, 8])
    pl.remove(7)
    assert list(pl) == ["one", "two", None, 8]
    pl.reverse()
    assert list(pl) == [8, None, "two", "one"]
    assert [x for x in pl] == list(pl)
    while len(pl):
        pl.pop()
    with pytest.raises(IndexError):
        pl.pop()
    with pytest.raises(IndexError):
        del pl[0]


def test_plist_value_types(heap):
    t = Thing(heap, n=4)
    values = scalar_values() + [t]
    pl = uniheap.PList(heap, values)
    assert len(pl) == len(values)
    for i, v in enumerate(values[:-1]):
        assert same_value(pl[i], v), (i, v, pl[i])
    assert pl[-1] == t and pl[-1].n == 4
    with pytest.raises(TypeError):
        pl.append(object())
    with pytest.raises(TypeError):
        pl[0] = [1, 2]
    assert len(pl) == len(values)


def test_plist_random_against_model(heap):
    rng = random.Random(5)
    pl = uniheap.PList(heap, range(20))
    model = list(range(20))
    for i in range(600):
        op = rng.random()
        if op < 0.35:
            pl.append(i)
            model.append(i)
        elif op < 0.6:
            j = rng.randrange(len(model) + 1)
            pl.insert(j, f"s{i}")
            model.insert(j, f"s{i}")
        elif op < 0.7 and model:
            j = rng.randrange(-len(model), len(model))
            assert pl.pop(j) == model.pop(j)
        elif op < 0.8 and model:
            j = rng.randrange(-len(model), len(model))
            del pl[j]
            del model[j]
        elif model:
            j = rng.randrange(-len(model), len(model))
            pl[j] = i
            model[j] = i
    assert len(pl) == len(model)
    assert list(pl) == model
    assert [pl[i] for i in range(len(model))] == model


def test_plist_in_rolled_back_block(heap):
    pl = uniheap.PList(heap, [1, 2, 3])
    with pytest.raises(KeyError):
        with heap.atomic():
            pl.append(4)
            pl.pop(0)
            pl[0] = "x"
            raise KeyError("roll back")
    assert list(pl) == [1, 2, 3]


# ---- PArray ----

@pytest.mark.parametrize("etype,values", [
    ("i8", [-128, 127, 0, 5]),
    ("i16", [-32768, 32767, -1]),
    ("i32", [-2**31, 2**31 - 1, 7]),
    ("i64", [-2**63, 2**63 - 1, 0, 1]),
    ("f64", [0.1, -2.5, float("inf")]),
    ("f32", [0.5, -2.25, 1024.0]),
    ("bool", [True, False, True]),
    ("string", ["", "ünï", None, "x" * 1000]),
    ("bytes", [b"", b"\x00\x01", None]),
])
def test_parray_types(heap, etype, values):
    a = uniheap.PArray(heap, etype, len(values))
    assert a.elem_type == etype
    assert len(a) == len(values)
    assert isinstance(a, collections.abc.Sequence)
    for i, v in enumerate(values):
        a[i] = v
    for i, v in enumerate(values):
        assert a[i] == v and type(a[i]) is type(v), (i, v, a[i])
    assert list(a) == values
    b = uniheap.PArray(heap, etype, values)    # from an iterable
    assert list(b) == values and len(b) == len(values)


def test_parray_zeroed_and_bounds(heap):
    a = uniheap.PArray(heap, "i64", 10)
    assert list(a) == [0] * 10
    a[9] = 99
    assert a[9] == 99
    with pytest.raises(IndexError):
        a[10]
    with pytest.raises(IndexError):
        a[10] = 1
    with pytest.raises(IndexError):
        a[2**40]
    assert len(a) == 10
    assert not hasattr(a, "append")
    s = uniheap.PArray(heap, "string", 3)
    assert list(s) == [None, None, None]
    f = uniheap.PArray(heap, "f64", 2)
    assert list(f) == [0.0, 0.0]


def test_parray_f32_rounding(heap):
    import struct
    a = uniheap.PArray(heap, "f32", 1)
    a[0] = 0.1
    assert a[0] == struct.unpack("<f", struct.pack("<f", 0.1))[0]


def test_parray_range_and_types(heap):
    a = uniheap.PArray(heap, "i8", 2)
    for bad in (128, -129, 2**70):
        with pytest.raises(uniheap.ValueRangeError):
            a[0] = bad
    for bad in ("1", 1.5, b"x", None):
        with pytest.raises(TypeError):
            a[0] = bad
    assert list(a) == [0, 0]
    s = uniheap.PArray(heap, "string", 1)
    with pytest.raises(TypeError):
        s[0] = b"bytes"
    with pytest.raises((TypeError, ValueError)):
        uniheap.PArray(heap, "nosuchtype", 3)


def test_parray_of_refs(heap):
    things = [Thing(heap, n=i) for i in range(5)]
    a = uniheap.PArray(heap, "ref", 5)
    for i, t in enumerate(things):
        a[i] = t
    assert [x.n for x in a] == list(range(5))
    a[0] = None
    assert a[0] is None
    with pytest.raises(TypeError):
        a[1] = 5


def test_collections_persist_as_roots(heap, connect):
    heap.roots["m"] = uniheap.PMap(heap, key=int, data={1: "a"})
    heap.roots["sm"] = uniheap.PSortedMap(heap, key=str, data={"b": 2, "a": 1})
    heap.roots["l"] = uniheap.PList(heap, ["x", 1])
    heap.roots["a"] = uniheap.PArray(heap, "i32", [3, 2, 1])
    other = connect()
    m, sm, l, a = (other.roots[n] for n in ("m", "sm", "l", "a"))
    assert type(m) is uniheap.PMap and m.key_type is int and dict(m) == {1: "a"}
    assert isinstance(sm, uniheap.PSortedMap) and list(sm.items()) == [("a", 1), ("b", 2)]
    assert isinstance(l, uniheap.PList) and list(l) == ["x", 1]
    assert isinstance(a, uniheap.PArray) and a.elem_type == "i32" and list(a) == [3, 2, 1]
    m[2] = "b"
    assert heap.roots["m"][2] == "b"
