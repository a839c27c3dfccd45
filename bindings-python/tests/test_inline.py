"""Inline string and bytes fields from Python (string(max=N), bytes_(max=N);
FORMAT.md 3.2): layout, round trips in and out of blocks, the refusal of a
value longer than the capacity, asdict/astuple from one copy of the record,
generic proxies and the class-table view of the capacity."""

import pytest

import uniheap
from conftest import run_python


class Rec(uniheap.PObject, name="t.inline.Rec"):
    key = uniheap.i64()
    blob = uniheap.bytes_(max=10)
    flag = uniheap.i8()
    text = uniheap.string(max=5)


class Ycsb(uniheap.PObject, name="t.inline.Ycsb"):
    locals().update({f"field{i}": uniheap.bytes_(max=100) for i in range(10)})


def test_declaration():
    blob = Rec.__uniheap_fields__[1]
    assert blob.type == "inline bytes" and blob.capacity == 10
    assert Rec.__uniheap_fields__[3].type == "inline string"
    assert Rec.__uniheap_fields__[0].capacity == 0
    assert "max=10" in repr(blob)
    with pytest.raises(ValueError):
        uniheap.bytes_(max=0)
    with pytest.raises(ValueError):
        uniheap.string(max=65536)
    with pytest.raises(ValueError):
        uniheap.Field("i64", max=4)


def test_layout_is_the_format_rule(heap):
    Rec(heap)
    offsets = [f.offset for f in Rec.__uniheap_fields__]
    assert offsets == [16, 24, 38, 40]
    Ycsb(heap)
    assert [f.offset for f in Ycsb.__uniheap_fields__] == [16 + 104 * i for i in range(10)]
    table = {c["name"]: c for c in heap.classes()}
    assert table["t.inline.Ycsb"]["payload_size"] == 1040
    f = table["t.inline.Rec"]["fields"][1]
    assert (f["type"], f["capacity"], f["ref_class"]) == ("inline bytes", 10, 0)


def test_round_trip(heap):
    r = Rec(heap, key=7, blob=b"0123456789", text="h\u00e9")
    assert r.blob == b"0123456789" and r.text == "h\u00e9" and r.key == 7
    fresh = Rec(heap)
    assert fresh.blob == b"" and fresh.text == ""
    r.blob = b"abc"
    assert r.blob == b"abc"
    r.blob = bytearray(b"xy")
    assert r.blob == b"xy"
    r.blob = memoryview(b"mv")
    assert r.blob == b"mv"
    r.blob = b""
    assert r.blob == b""


def test_too_long_is_refused_naming_field_capacity_length(heap):
    r = Rec(heap, blob=b"keep")
    with pytest.raises(ValueError) as e:
        r.blob = b"x" * 11
    msg = str(e.value)
    assert "blob" in msg and "10" in msg and "11" in msg
    assert r.blob == b"keep"
    with pytest.raises(ValueError):
        r.text = "\u00e9\u00e9\u00e9"       # 6 UTF-8 bytes, capacity 5
    with pytest.raises(TypeError):
        r.blob = "str"
    with pytest.raises(TypeError):
        r.text = b"bytes"
    with pytest.raises(TypeError):
        r.blob = None


def test_blocks(heap):
    r = Rec(heap, blob=b"before")
    with pytest.raises(RuntimeError):
        with heap.atomic():
            r.blob = b"inside"
            assert r.blob == b"inside"
            assert uniheap.asdict(r)["blob"] == b"inside"
            raise RuntimeError("roll back")
    assert r.blob == b"before"
    with heap.atomic():
        r.blob = b"one"
        r.blob = b"two"
        r.text = "t"
    assert (r.blob, r.text) == (b"two", "t")


def test_asdict_astuple_one_copy(heap):
    values = {f"field{i}": bytes([65 + i]) * (100 - i) for i in range(10)}
    y = Ycsb(heap, **values)
    assert uniheap.asdict(y) == values
    assert uniheap.astuple(y) == tuple(values.values())
    r = Rec(heap, key=-3, blob=b"b", flag=2, text="s")
    assert uniheap.asdict(r) == {"key": -3, "blob": b"b", "flag": 2, "text": "s"}


def test_generic_proxy_reads_inline(heapd, heap):
    """A process that never declared the class reads it generically."""
    heap.roots["inline.rec"] = Rec(heap, key=1, blob=b"generic", text="g")
    out = run_python(["-c", (
        "import uniheap\n"
        "h = uniheap.connect()\n"
        "r = h.roots['inline.rec']\n"
        "print(type(r).__name__, r.blob, r.text, uniheap.asdict(r)['blob'])\n"
        "r.blob = b'written'\n"
        "print(r.blob)\n")], heapd=heapd)
    assert out.returncode == 0, out.stderr
    assert "Rec b'generic' g b'generic'" in out.stdout
    assert "b'written'" in out.stdout


def test_capacity_mismatch_is_class_mismatch(heap):
    Rec(heap)

    class Other(uniheap.PObject, name="t.inline.Rec2"):
        blob = uniheap.bytes_(max=10)
    Other(heap)

    class Other2(uniheap.PObject, name="t.inline.Rec2"):
        blob = uniheap.bytes_(max=11)
    with pytest.raises(uniheap.ClassMismatch) as e:
        Other2(heap)
    assert "capacity 10" in str(e.value) and "capacity 11" in str(e.value)
