"""Records as map values, one call each: get_fields (a record's fields as
a dict), set_field (one field replaced) and scan_fields (the records of a
key range as dicts), on hash and sorted maps; each gives what the proxy
path (asdict, setattr, a scan of proxies) gives, also for classes with
out-of-line values and for fields that are not inline."""

import pytest

import uniheap


class Row(uniheap.PObject, name="t.maprec.Row"):
    n = uniheap.i64()
    a = uniheap.bytes_(max=8)
    s = uniheap.string(max=8)
    x = uniheap.f64()


class Loose(uniheap.PObject, name="t.maprec.Loose"):
    n = uniheap.i32()
    b = uniheap.bytes_()        # out of line
    s = uniheap.string()


@pytest.fixture(params=["hash", "sorted"])
def table(heap, request):
    cls = uniheap.PMap if request.param == "hash" else uniheap.PSortedMap
    return cls(heap, key=str)


def test_get_fields_is_asdict(heap, table):
    table["k"] = Row(heap, n=-3, a=b"ab", s="h\u00e9", x=1.5)
    want = {"n": -3, "a": b"ab", "s": "h\u00e9", "x": 1.5}
    assert table.get_fields("k") == want == uniheap.asdict(table["k"])
    assert table.get_fields("none") is None
    with heap.atomic():
        table["k"].a = b"in"
        assert table.get_fields("k")["a"] == b"in"


def test_get_fields_out_of_line_values(heap, table):
    table["k"] = Loose(heap, n=4, b=b"bytes", s="str")
    assert table.get_fields("k") == {"n": 4, "b": b"bytes", "s": "str"}
    table["e"] = Loose(heap)
    assert table.get_fields("e") == {"n": 0, "b": None, "s": None}


def test_get_fields_of_a_value_that_is_no_record(heap, table):
    table["i"] = 5
    table["p"] = uniheap.PList(heap)
    for key in ("i", "p"):
        with pytest.raises(TypeError):
            table.get_fields(key)


def test_set_field(heap, table):
    table["k"] = Row(heap, n=1)
    assert table.set_field("k", "a", b"12345678") is True
    assert table.set_field("k", "s", "txt") is True
    assert table.set_field("none", "a", b"x") is False
    assert table.get_fields("k") == {"n": 1, "a": b"12345678", "s": "txt", "x": 0.0}
    assert table.set_field("k", "n", 9) is True          # not inline: through the proxy
    assert table.set_field("k", "a", bytearray(b"ba")) is True
    assert table["k"].n == 9 and table["k"].a == b"ba"


def test_set_field_refusals_are_setattr_s(heap, table):
    table["k"] = Row(heap, a=b"keep")
    with pytest.raises(AttributeError):
        table.set_field("k", "nope", b"x")
    with pytest.raises(uniheap.Error):
        table.set_field("k", "a", b"123456789")         # longer than max=8
    with pytest.raises(TypeError):
        table.set_field("k", 3, b"x")
    assert table["k"].a == b"keep"


def test_set_field_in_a_block_rolls_back(heap, table):
    table["k"] = Row(heap, a=b"old")
    with pytest.raises(RuntimeError):
        with heap.atomic():
            table.set_field("k", "a", b"new")
            assert table.get_fields("k")["a"] == b"new"
            raise RuntimeError
    assert table.get_fields("k")["a"] == b"old"


def test_set_field_on_out_of_line_fields(heap, table):
    table["k"] = Loose(heap)
    assert table.set_field("k", "b", b"long value") is True
    assert table.get_fields("k")["b"] == b"long value"


def test_scan_fields(heap):
    t = uniheap.PSortedMap(heap, key=str)
    for i in range(200):
        t[f"k{i:03}"] = Row(heap, n=i, a=str(i).encode())
    got = t.scan_fields("k050", 3)
    assert [d["n"] for d in got] == [50, 51, 52]
    assert got[0] == uniheap.asdict(t["k050"])
    with heap.atomic():
        whole = t.scan_fields(None, 1000)
    assert [d["n"] for d in whole] == list(range(200))
    assert [d["n"] for d in t.scan_fields("k1995", 10)] == []
    assert t.scan_fields("k000", 0) == []
    assert [d["n"] for d in t.scan_fields("k19", 100)] == list(range(190, 200))


def test_scan_fields_mixed_classes(heap):
    t = uniheap.PSortedMap(heap, key=str)
    t["a"] = Row(heap, n=1)
    t["b"] = Loose(heap, n=2, s="x")
    assert t.scan_fields(None, 5) == [uniheap.asdict(t["a"]), uniheap.asdict(t["b"])]
    t["c"] = 7
    with pytest.raises(TypeError):
        t.scan_fields(None, 5)


def test_scan_fields_needs_a_sorted_map(heap):
    with pytest.raises(TypeError):
        uniheap.PMap(heap, key=str).scan_fields(None, 1)


def test_put_record(heap, table):
    table.put_record("k", Row, {"n": 5, "a": b"ab", "s": "x"})
    assert table.get_fields("k") == {"n": 5, "a": b"ab", "s": "x", "x": 0.0}
    assert isinstance(table["k"], Row)
    table.put_record("l", Loose, {"b": b"out of line", "s": "str"})
    assert uniheap.asdict(table["l"]) == {"n": 0, "b": b"out of line", "s": "str"}


def test_put_record_of_inline_values_only(heap, table):
    # every value inline (one libuniheap call), then ones it would refuse,
    # which go the proxy path and raise as a setattr does
    table.put_record("i", Row, {"a": b"12345678", "s": "h\u00e9"})
    assert table.get_fields("i") == {"n": 0, "a": b"12345678", "s": "h\u00e9", "x": 0.0}
    table.put_record("i", Row, {"a": b""}, True)
    assert table.get_fields("i")["a"] == b""
    with pytest.raises(uniheap.Error):
        table.put_record("j", Row, {"s": "123456789"})
    with pytest.raises(TypeError):
        table.put_record("j", Row, {"a": "a str for bytes"})
    with pytest.raises(TypeError):
        table.put_record("j", Row, {"s": b"bytes for a str"})
    assert "j" not in table


def test_put_record_free_old(heap, table):
    table.put_record("k", Row, {"n": 1})
    old = table["k"]
    table.put_record("k", Row, {"n": 2}, True)
    assert table["k"].n == 2
    with pytest.raises(uniheap.FreedObjectError):
        old.n
    table.put_record("k", Row, {"n": 3})
    assert table["k"].n == 3 and len(table) == 1


def test_put_record_refusals_leave_the_map(heap, table):
    table.put_record("k", Row, {"n": 1})
    with pytest.raises(AttributeError):
        table.put_record("k", Row, {"n": 2, "nope": b"x"})
    with pytest.raises(uniheap.Error):
        table.put_record("k", Row, {"a": b"123456789"})
    with pytest.raises(TypeError):
        table.put_record("k", Row, [("n", 3)])
    with pytest.raises(TypeError):
        table.put_record("j", Row, {"n": "not an int"})
    assert table.get_fields("k")["n"] == 1 and "j" not in table and len(table) == 1


def test_put_record_in_a_block(heap, table):
    with pytest.raises(RuntimeError):
        with heap.atomic():
            table.put_record("k", Row, {"n": 1})
            assert table.get_fields("k")["n"] == 1
            raise RuntimeError
    assert "k" not in table
