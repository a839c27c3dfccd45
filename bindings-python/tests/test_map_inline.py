"""str and bytes values in hash maps (PMap): a value of up to 128 bytes
lives in the key's entry, a longer one is an object of its own. Where it
lives makes no difference to a read (get, iteration, pop), in a block or
not; replacing and removing free what they replace; views show a short
value in its entry; a freed map or value raises, never crashes."""

import itertools
import subprocess

import pytest
from conftest import WORKERS, spawn_python, stop_process

import uniheap

INLINE_MAX = 128
LENGTHS = [0, 1, INLINE_MAX, INLINE_MAX + 1, 5000]


def text_of(n):
    """A str whose UTF-8 is exactly n bytes, of 1- to 4-byte characters."""
    out, left = [], n
    for ch in itertools.cycle("aé✓🐍"):
        if len(ch.encode()) > left:
            break
        out.append(ch)
        left -= len(ch.encode())
    return "".join(out) + "x" * left


def bytes_of(n):
    return bytes(i * 7 % 256 for i in range(n))      # NULs and 0xff among them


def sized(i, n, kind=str):
    """A value of exactly n bytes that starts with i (when n leaves room)."""
    s = (f"{i}:" + "v" * n)[:n]
    return s if kind is str else s.encode()


def same(got, want):
    return type(got) is type(want) and got == want


KEY_OF = {str: "k", bytes: b"k", int: 7}


# ---- round trips ----

@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("make", [text_of, bytes_of], ids=["str", "bytes"])
@pytest.mark.parametrize("key", [str, bytes, int], ids=["str-key", "bytes-key", "int-key"])
def test_round_trip(heap, key, make, n):
    m = uniheap.PMap(heap, key=key)
    k, v = KEY_OF[key], make(n)
    m[k] = v
    assert same(m[k], v) and same(m.get(k), v)
    assert k in m and len(m) == 1
    assert list(m) == [k]
    assert [same(x, v) for x in m.values()] == [True]
    assert [(a, same(b, v)) for a, b in m.items()] == [(k, True)]
    m.check()


@pytest.mark.parametrize("n", LENGTHS)
def test_bytearray_comes_back_as_bytes(heap, n):
    m = uniheap.PMap(heap)
    m["k"] = bytearray(bytes_of(n))
    assert same(m["k"], bytes_of(n))


def test_many_keys_of_every_length(heap):
    want = {}
    for i, n in enumerate(LENGTHS * 20):
        want[f"s{i}"] = text_of(n)
        want[f"b{i}"] = bytes_of(n)
    m = uniheap.PMap(heap, data=want)
    assert len(m) == len(want)
    got = dict(m.items())
    assert got == want and all(type(got[k]) is type(want[k]) for k in want)
    assert all(same(m[k], v) for k, v in want.items())
    m.check()


def test_sorted_maps_keep_their_values_as_before(heap):
    want = {i: (text_of(n) if i % 2 else bytes_of(n)) for i, n in enumerate(LENGTHS * 2)}
    sm = uniheap.PSortedMap(heap, key=int, data=want)
    assert list(sm.items()) == sorted(want.items())
    assert sm.view(0).tobytes() == want[0]
    assert sm.pop(1) == want[1]
    sm.check()


def test_a_str_that_is_not_utf8_is_refused(heap):
    m = uniheap.PMap(heap, data={"k": "kept"})
    with pytest.raises(UnicodeEncodeError):
        m["k"] = "lone \ud800 surrogate"
    assert m["k"] == "kept" and len(m) == 1


# ---- blocks ----

def test_puts_and_reads_in_a_block(heap):
    m = uniheap.PMap(heap, data={"keep": "old"})
    want = {"keep": "new"}
    with heap.atomic():
        for n in LENGTHS:
            m[f"s{n}"] = want[f"s{n}"] = text_of(n)
            m[f"b{n}"] = want[f"b{n}"] = bytes_of(n)
        m["keep"] = "new"
        assert dict(m) == want          # the block's own writes
    assert dict(m) == want


def test_a_rolled_back_block_leaves_every_value(heap):
    want = {"s": text_of(INLINE_MAX), "b": bytes_of(3), "long": text_of(5000)}
    m = uniheap.PMap(heap, data=want)
    with pytest.raises(RuntimeError):
        with heap.atomic():
            m["s"] = bytes_of(INLINE_MAX + 1)
            m["b"] = "other"
            assert m.pop("long") == want["long"]
            m["new"] = b"x"
            raise RuntimeError("roll back")
    assert dict(m) == want
    m.check()


# ---- replacing ----

@pytest.mark.parametrize("make", [text_of, bytes_of], ids=["str", "bytes"])
def test_replace_inline_object_inline(heap, make):
    m = uniheap.PMap(heap)
    chain = [make(1), make(INLINE_MAX), make(INLINE_MAX + 1), make(5000), make(0),
             make(INLINE_MAX), 42, make(3), None, make(200), make(5), 1.5, make(INLINE_MAX)]
    for v in chain:
        m["k"] = v
        assert same(m["k"], v), v
        assert len(m) == 1
    m.check()


def test_replace_str_by_bytes_and_back(heap):
    m = uniheap.PMap(heap, key=int)
    for v in ("ab", b"ab", "ab", text_of(300), b"ab", bytes_of(300), "ab"):
        m[1] = v
        assert same(m[1], v)


def test_replacing_frees_what_it_replaces(heap):
    """Every replaced value goes: an entry with it, or its object (the
    heap does not grow by the values put over and over)."""
    m = uniheap.PMap(heap)
    m["k"] = "start"

    def replace_many():
        for i in range(1000):
            m["k"] = bytes_of(5000)
            m["k"] = sized(i, 100)
            m["k"] = sized(i, INLINE_MAX + 1, bytes)
            m["k"] = sized(i, 10)
    replace_many()
    before = heap.info()["used_size"]
    replace_many()
    grown = heap.info()["used_size"] - before
    assert grown < 1 << 20, f"{grown} bytes more after 1000 rounds: a replaced value stayed"
    assert m["k"] == sized(999, 10)


# ---- remove, pop ----

@pytest.mark.parametrize("n", LENGTHS)
def test_pop_returns_the_old_value(heap, n):
    m = uniheap.PMap(heap, data={"s": text_of(n), "b": bytes_of(n)})
    assert same(m.pop("s"), text_of(n))
    assert "s" not in m and len(m) == 1
    assert m.pop("s", "default") == "default"
    with pytest.raises(KeyError):
        m.pop("s")
    with heap.atomic():
        assert same(m.pop("b"), bytes_of(n))
        assert "b" not in m
    assert len(m) == 0
    m.check()


def test_pop_in_a_rolled_back_block_keeps_the_value(heap):
    m = uniheap.PMap(heap, data={"k": text_of(10)})
    with pytest.raises(RuntimeError):
        with heap.atomic():
            assert m.pop("k") == text_of(10)
            raise RuntimeError("roll back")
    assert m["k"] == text_of(10)


def test_del_popitem_and_clear(heap):
    m = uniheap.PMap(heap, data={"a": "x", "b": b"y", "c": text_of(INLINE_MAX + 1)})
    del m["a"]
    assert "a" not in m
    k, v = m.popitem()
    assert (k, v) in {("b", b"y"), ("c", text_of(INLINE_MAX + 1))}
    m.clear()
    assert len(m) == 0 and dict(m) == {}
    m.check()


# ---- iteration ----

@pytest.mark.parametrize("old_n,new_n", [(10, 20), (INLINE_MAX, 5), (10, INLINE_MAX + 1),
                                         (INLINE_MAX + 1, 10), (0, INLINE_MAX)])
@pytest.mark.parametrize("in_block", [False, True], ids=["alone", "in-block"])
def test_replacing_each_value_while_iterating(heap, old_n, new_n, in_block):
    """for k in m: m[k] = new visits every key once, though each put frees
    the key's entry and makes a new one."""
    count = 300
    m = uniheap.PMap(heap, key=int, data={i: sized(i, old_n) for i in range(count)})
    seen = []

    def replace_all():
        seen.clear()
        for k in m:
            seen.append(k)
            m[k] = sized(k, new_n, bytes)
    if in_block:
        heap.atomic(replace_all)
    else:
        replace_all()
    assert sorted(seen) == list(range(count))
    assert dict(m) == {i: sized(i, new_n, bytes) for i in range(count)}
    m.check()


def test_items_give_the_old_value_while_each_is_replaced(heap):
    count = 200
    m = uniheap.PMap(heap, key=int, data={i: sized(i, 30) for i in range(count)})
    seen = {}
    for k, v in m.items():
        seen[k] = v
        m[k] = sized(k, 60, bytes)
    assert seen == {i: sized(i, 30) for i in range(count)}
    assert sorted(m.values()) == sorted(sized(i, 60, bytes) for i in range(count))


# ---- views ----

def test_view_of_a_short_bytes_value(heap):
    m = uniheap.PMap(heap)
    first = b"short\x00value"
    m["k"] = first
    v = m.view("k")
    assert v.readonly and v.tobytes() == first and v.obj.valid
    m["k"] = b"other\x00value"       # frees the entry the view shows
    for _ in range(50):             # entries of the same size reuse the slot
        uniheap.PMap(heap, data={"k": b"C" * len(first)})
    assert not v.obj.valid
    assert len(bytes(v)) == len(first)      # readable, whatever it shows now
    assert m.view("k").tobytes() == b"other\x00value"


@pytest.mark.parametrize("n", [0, 1, INLINE_MAX, INLINE_MAX + 1])
def test_view_of_every_length(heap, n):
    m = uniheap.PMap(heap, data={"k": bytes_of(n)})
    v = m.view("k")
    assert v.tobytes() == bytes_of(n) and v.obj.valid
    del m["k"]
    assert not v.obj.valid


def test_view_of_a_short_value_in_a_block(heap):
    m = uniheap.PMap(heap)
    with heap.atomic():
        m["k"] = b"made here"
        assert m.view("k").tobytes() == b"made here"
    assert m.view("k").tobytes() == b"made here"


def test_view_of_a_short_str_says_string(heap):
    m = uniheap.PMap(heap, data={"s": "text"})
    with pytest.raises(TypeError, match="string"):
        m.view("s")


# ---- what is not a record, freed maps ----

def test_record_calls_on_short_values(heap):
    m = uniheap.PMap(heap, data={"s": "text", "b": b"bin"})
    for k in ("s", "b"):
        with pytest.raises(TypeError):
            m.get_fields(k)
        with pytest.raises(AttributeError):
            m.set_field(k, "n", "x")
    assert m["s"] == "text" and m["b"] == b"bin"


def test_a_freed_map_raises(heap):
    m = uniheap.PMap(heap, data={"s": "x", "b": b"y", "long": bytes_of(500)})
    v = m.view("b")
    it = iter(m.items())
    heap.free(m)
    for op in (lambda: m["s"], lambda: m.get("b"), lambda: m.pop("s"), lambda: m.view("b"),
               lambda: m.__setitem__("s", "z"), lambda: list(m.values())):
        with pytest.raises(uniheap.FreedObjectError):
            op()
    with pytest.raises((uniheap.FreedObjectError, StopIteration)):
        next(it)
    assert len(bytes(v)) == 1       # the view stays readable


# ---- another process replacing ----

def test_values_read_while_another_process_replaces_them(heap, heapd):
    """Outside blocks, a read of a value that another process keeps
    replacing (its length crossing 128 bytes, so entries and objects in
    turn) is one whole value of some commit, never an error; a view copied
    while valid holds a whole value."""
    from inline_writer import text, valid, value

    m = uniheap.PMap(heap, data={"s": text(0), "b": value(0), "gone": value(0)})
    heap.roots["t.inl.map"] = m
    count = 60000
    p = spawn_python([WORKERS / "inline_writer.py", count], heapd,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    reads = views = 0
    try:
        while p.poll() is None:
            for got in (m["s"], m["b"], m.get("gone", value(0)), *m.values()):
                assert valid(got), got
            for k, got in m.items():
                assert k in ("s", "b", "gone") and valid(got), (k, got)
            v = m.view("b")
            copy = bytes(v)
            if v.obj.valid:
                assert valid(copy), copy
                views += 1
            reads += 1
        _, err = p.communicate(timeout=60)
    finally:
        stop_process(p)
    assert p.returncode == 0, err
    assert reads > 100 and views > 0
    assert m["s"] == text(count) and m["b"] == value(count)
