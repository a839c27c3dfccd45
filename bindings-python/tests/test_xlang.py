"""Python and C on one heap (the C side is tests/c/prog_py_xlang.c).

C -> Python: C registers classes Python never declares and creates objects
and a map under roots; Python reads them through generic proxies, updates
them in a block, and C sees the updates.
Python -> C: Python declares a class and creates objects and collections;
C reads and checks every field and entry with libuniheap's C API.
Both ways: a hash map of str and bytes values, the short ones kept in
their entries (inline), the longer as objects."""

import json
import random
import struct

import pytest

import uniheap
from conftest import run_prog

LABELS = ["point-0", "pünkt ✓", ""]
# The inline-values map of prog_py_xlang.c (create_inline): for n in
# INL_LENS, "s<n>" -> inl_text(n), "b<n>" -> inl_bytes(n); up to 128 bytes
# a hash map keeps a value in its entry.
INL_LENS = [0, 1, 128, 129]


def inl_text(n):
    return "é" * (n // 2) + "x" * (n % 2)


def inl_bytes(n):
    return bytes(i * 7 % 256 for i in range(n))


def inline_values():
    return {**{f"s{n}": inl_text(n) for n in INL_LENS},
            **{f"b{n}": inl_bytes(n) for n in INL_LENS}}


def test_c_objects_through_generic_proxies(heap, heapd):
    r = run_prog("prog_py_xlang", "create", heapd.sock)
    assert r.returncode == 0, r.stdout + r.stderr

    # read what C made: classes from the heap's class table
    p0 = heap.roots["xlang.points"]
    assert isinstance(p0, uniheap.PObject)
    assert p0.class_name == "xlang.Point"
    assert [f.name for f in type(p0).__uniheap_fields__] == ["x", "y", "w", "label", "next"]
    assert [f.type for f in type(p0).__uniheap_fields__] == ["i64", "i64", "f64", "string", "ref"]
    points = []
    p = p0
    while p is not None:
        points.append(p)
        p = p.next
    assert len(points) == 3
    for i, pt in enumerate(points):
        assert (pt.x, pt.y, pt.w, pt.label) == (i + 1, -10 * (i + 1), 1.5 * (i + 1), LABELS[i])
    text = repr(points[1])
    assert "xlang.Point" in text and "label" in text and "x" in text

    kinds = heap.roots["xlang.kinds"]
    assert kinds.class_name == "xlang.Kinds"
    assert kinds.flag is True
    assert (kinds.tiny, kinds.small, kinds.mid, kinds.big) == (-128, 32767, -2**31, 2**63 - 1)
    assert kinds.ratio == 0.5
    assert kinds.raw == b"\x00\x01\xff\x00"

    index = heap.roots["xlang.index"]
    assert isinstance(index, uniheap.PMap) and index.key_type is str
    assert index["origin"] == p0
    assert index["count"] == 3 and index["name"] == "points"
    assert index["ratio"] == 0.25 and index["yes"] is True
    assert sorted(index) == ["count", "name", "origin", "ratio", "yes"]

    # update everything in one block, as prog_py_xlang verify expects
    with heap.atomic():
        for pt in points:
            pt.x += 100
            pt.w *= 2
            pt.label = pt.label + "/py"
        points[-1].next = points[0]
        kinds.flag = False
        kinds.tiny = 127
        kinds.mid = 2**31 - 1
        kinds.ratio = -2.25
        kinds.raw = b"py\x00bytes"
        kinds.big = -2**63
        index["count"] = 4
        index["py"] = "from python"
        del index["yes"]
        # range checks follow the C class's field types
        with pytest.raises(uniheap.ValueRangeError):
            kinds.small = 32768
        with pytest.raises(TypeError):
            kinds.raw = "not bytes"

    r = run_prog("prog_py_xlang", "verify", heapd.sock)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "verify:" in r.stdout and " 0 failed" in r.stdout


def test_c_inline_values_read_by_python(heap, heapd):
    """C put str and bytes values with uh_map_put_bytes (inline up to 128
    bytes): Python reads them by get, iteration, pop and view."""
    r = run_prog("prog_py_xlang", "create", heapd.sock)
    assert r.returncode == 0, r.stdout + r.stderr
    m = heap.roots["xlang.inline"]
    want = inline_values()
    for k, v in want.items():
        got = m[k]
        assert type(got) is type(v) and got == v, k
    assert dict(m.items()) == want and sorted(m) == sorted(want)
    assert m.view("b128").tobytes() == inl_bytes(128)
    assert m.pop("s128") == inl_text(128) and "s128" not in m
    m["s128"] = inl_text(128)       # put back, now an entry Python made
    assert m["s128"] == inl_text(128)


def test_python_layout_mismatch_with_c_class(heap, heapd):
    r = run_prog("prog_py_xlang", "create", heapd.sock)
    assert r.returncode == 0, r.stdout + r.stderr

    class Point(uniheap.PObject, name="xlang.Point"):
        x = uniheap.i64()
        y = uniheap.i32()            # C says i64
        w = uniheap.f64()
        label = uniheap.string()
        next = uniheap.ref()

    with pytest.raises(uniheap.ClassMismatch) as ei:
        Point(heap, x=1)
    assert "y" in str(ei.value)
    # the heap's class is unchanged
    r = heapd.heapctl("--json", "classes")
    cls = [c for c in json.loads(r.stdout)["classes"] if c["name"] == "xlang.Point"]
    assert len(cls) == 1
    assert [(f["name"], f["type"]) for f in cls[0]["fields"]][:2] == [
        ("x", "FIELD_TYPE_I64"), ("y", "FIELD_TYPE_I64")]
    r = run_prog("prog_py_xlang", "verify", heapd.sock)
    assert "verify:" in r.stdout                 # C still reads its objects


def test_python_layout_equal_to_c_class(heap, heapd):
    """The same layout declared in Python is the same class: C's objects
    come back as instances of the Python class."""
    r = run_prog("prog_py_xlang", "create", heapd.sock)
    assert r.returncode == 0, r.stdout + r.stderr

    class Point(uniheap.PObject, name="xlang.Point"):
        x = uniheap.i64()
        y = uniheap.i64()
        w = uniheap.f64()
        label = uniheap.string()
        next = uniheap.ref()

    mine = Point(heap, x=7, label="python's")
    p0 = heap.roots["xlang.points"]
    assert p0.class_id == mine.class_id
    assert isinstance(heap.proxy(mine.offset), Point)
    mine.next = p0
    assert mine.next.x == 1


class Person(uniheap.PObject, name="pyx.Person"):
    name = uniheap.string()
    age = uniheap.i32()
    score = uniheap.f64()
    active = uniheap.bool_()
    tag = uniheap.bytes_()
    friend = uniheap.ref("pyx.Person")
    level = uniheap.i8()
    rank = uniheap.i16()
    weight = uniheap.f32()
    id = uniheap.i64()


def test_python_objects_read_from_c(heap, heapd):
    with heap.atomic():
        alice = Person(heap, name="Alice", age=30, score=97.5, active=True, tag=b"\x00A\x00",
                       level=-5, rank=1000, weight=0.5, id=1 << 40)
        bob = Person(heap, name="B\u00f8b \U0001f40d", age=40, score=-1.25, active=False,
                     tag=b"", friend=alice, level=127, rank=-32768, weight=-2.0, id=-1)
        alice.friend = bob
        heap.roots["pyx.alice"] = alice
        heap.roots["pyx.map"] = uniheap.PMap(heap, data={
            "alice": alice, "bob": bob, "n": 42, "pi": 3.5, "s": "text \u2713",
            "b": b"\x00\xff", "t": True, "none": None})
        heap.roots["pyx.imap"] = uniheap.PMap(heap, key=int, data={i: i * i for i in range(-5, 100)})
        smap = uniheap.PSortedMap(heap, key=bytes)
        keys = list(range(50))
        random.Random(3).shuffle(keys)
        for i in keys:
            smap[b"k%03d" % i] = i
        heap.roots["pyx.smap"] = smap
        heap.roots["pyx.list"] = uniheap.PList(heap, [1, "two", 3.0, None, alice])
        heap.roots["pyx.arr"] = uniheap.PArray(heap, "i32", [0, -1, 2, -3, 4])
        heap.roots["pyx.inline"] = uniheap.PMap(heap, data=inline_values())
    assert bob.weight == struct.unpack("<f", struct.pack("<f", -2.0))[0]

    r = run_prog("prog_py_xlang", "check-py", heapd.sock)
    assert r.returncode == 0, r.stdout + r.stderr
    assert " 0 failed" in r.stdout
