"""Bad input gets a clear Python exception, never a crash: wrong types and
ranges, invalid class declarations, layout mismatches, freed and stale
proxies, closed heaps, wrong map keys, lone
surrogates, oversized blocks, a full heap."""

import pytest

import uniheap
from conftest import HeapD, make_temp_dir

ANY_ERROR = (uniheap.Error, TypeError, ValueError)


class Acct(uniheap.PObject, name="t.bad.Acct"):
    balance = uniheap.i64()
    owner = uniheap.string()
    peer = uniheap.ref("t.bad.Acct")


class Bag(uniheap.PObject, name="t.bad.Bag"):
    small = uniheap.i8()
    blob = uniheap.bytes_()
    any = uniheap.ref()


def test_exception_hierarchy():
    for name in ("Conflict", "FreedObjectError", "ClassMismatch", "HeapClosedError",
                 "ForkedError", "Disconnected", "HeapFull", "ReadOnlyError", "BlockTooLarge",
                 "TypeMismatch", "ValueRangeError", "InvalidValue"):
        cls = getattr(uniheap, name)
        assert issubclass(cls, uniheap.Error), name
    assert issubclass(uniheap.Error, Exception)
    assert issubclass(uniheap.TypeMismatch, TypeError)
    assert issubclass(uniheap.ValueRangeError, ValueError)
    assert issubclass(uniheap.InvalidValue, ValueError)
    assert issubclass(uniheap.Disconnected, ConnectionError)
    assert issubclass(uniheap.HeapFull, MemoryError)


# ---- wrong types and ranges ----

def test_wrong_types_leave_object_unchanged(heap):
    a = Acct(heap, balance=5, owner="me")
    b = Bag(heap, small=1, blob=b"x")
    cases = [(a, "balance", "5"), (a, "balance", 5.0), (a, "balance", None),
             (a, "owner", 5), (a, "owner", b"me"), (a, "peer", "me"), (a, "peer", 5),
             (a, "peer", b), (b, "small", "1"), (b, "blob", "x"), (b, "blob", 1),
             (b, "any", object()), (b, "any", [a])]
    for obj, field, bad in cases:
        with pytest.raises(TypeError) as ei:
            setattr(obj, field, bad)
        assert str(ei.value), (field, bad)
    assert (a.balance, a.owner, a.peer) == (5, "me", None)
    assert (b.small, b.blob, b.any) == (1, b"x", None)


def test_out_of_range_integers(heap):
    b = Bag(heap)
    for bad in (128, -129, 1 << 63, -(1 << 64), 10**30):
        with pytest.raises(uniheap.ValueRangeError) as ei:
            b.small = bad
        assert "small" in str(ei.value)        # names the field
    a = Acct(heap)
    for bad in (1 << 63, -(1 << 63) - 1):
        with pytest.raises(uniheap.ValueRangeError):
            a.balance = bad
    with pytest.raises(uniheap.ValueRangeError):
        Acct(heap, balance=1 << 64)
    assert b.small == 0 and a.balance == 0


def test_non_heap_arguments(heap):
    with pytest.raises(TypeError):
        Acct()
    with pytest.raises(TypeError):
        Acct("not a heap")
    with pytest.raises(TypeError):
        uniheap.PMap(None)
    with pytest.raises(TypeError):
        heap.free(5)
    with pytest.raises(TypeError):
        heap.free(Acct)
    with pytest.raises(TypeError):
        heap.proxy("12")
    with pytest.raises(TypeError):
        uniheap.connect(5)
    with pytest.raises(TypeError):
        heap.atomic(5)


def test_proxy_of_other_heap_refused(heap, heapd):
    """A proxy of another heap cannot be stored: its offset means nothing
    here."""
    d = make_temp_dir()
    second = HeapD(d)
    try:
        second.start()
        with uniheap.connect(second.sock) as h2:
            foreign = Acct(h2, balance=1)
            a = Acct(heap)
            with pytest.raises(ANY_ERROR):
                a.peer = foreign
            assert a.peer is None
            with pytest.raises(ANY_ERROR):
                heap.roots["foreign"] = foreign
            m = uniheap.PMap(heap)
            with pytest.raises(ANY_ERROR):
                m["f"] = foreign
            assert "foreign" not in heap.roots and len(m) == 0
    finally:
        second.stop()
        import shutil
        shutil.rmtree(d, ignore_errors=True)


# ---- invalid class declarations ----

def declaration_fails(heap, make_class, exc=ANY_ERROR):
    """make_class() declares a class; declaring it or using it the first
    time (allocating an object) must raise exc. Returns the exception."""
    with pytest.raises(exc) as ei:
        cls = make_class()
        cls(heap)
    return ei.value


def test_class_name_missing(heap):
    def make():
        class NoName(uniheap.PObject):
            x = uniheap.i64()
        return NoName
    declaration_fails(heap, make)


@pytest.mark.parametrize("name", ["", "x" * 256, 5, b"bytes.name"])
def test_class_name_invalid(heap, name):
    def make():
        class Bad(uniheap.PObject, name=name):
            x = uniheap.i64()
        return Bad
    declaration_fails(heap, make)


@pytest.mark.parametrize("field", ["café", "f" * 64, "bad-name", "1abc", "with space", ""])
def test_field_name_invalid(heap, field):
    def make():
        return type("BadField", (uniheap.PObject,),
                    {"ok": uniheap.i64(), field: uniheap.i32()}, name=f"t.bad.field{len(field)}")
    declaration_fails(heap, make, ANY_ERROR + (RuntimeError,))


def test_field_declared_twice(heap):
    def make():
        f = uniheap.i64()

        class Twice(uniheap.PObject, name="t.bad.Twice"):
            a = f
            b = f
        return Twice
    declaration_fails(heap, make, ANY_ERROR + (RuntimeError,))


def test_field_redeclared_in_subclass(heap):
    class Base(uniheap.PObject, name="t.bad.Base"):
        x = uniheap.i64()

    def make():
        class Sub(Base, name="t.bad.Sub"):
            x = uniheap.i32()
        return Sub
    declaration_fails(heap, make)


def test_bad_ref_target(heap):
    def make():
        class BadRef(uniheap.PObject, name="t.bad.BadRef"):
            r = uniheap.ref(42)
        return BadRef
    declaration_fails(heap, make)


def test_class_mismatch_names_the_field(heap):
    class V1(uniheap.PObject, name="t.bad.Versioned"):
        x = uniheap.i64()
        y = uniheap.i64()
    old = V1(heap, x=1, y=2)

    def other_type():
        class V2(uniheap.PObject, name="t.bad.Versioned"):
            x = uniheap.i64()
            y = uniheap.f64()
        return V2
    e = declaration_fails(heap, other_type, uniheap.ClassMismatch)
    assert "y" in str(e) and e.code == -6

    def extra_field():
        class V3(uniheap.PObject, name="t.bad.Versioned"):
            x = uniheap.i64()
            y = uniheap.i64()
            zeta = uniheap.i64()
        return V3
    e = declaration_fails(heap, extra_field, uniheap.ClassMismatch)
    assert "zeta" in str(e)

    def renamed():
        class V4(uniheap.PObject, name="t.bad.Versioned"):
            x = uniheap.i64()
            why = uniheap.i64()
        return V4
    e = declaration_fails(heap, renamed, uniheap.ClassMismatch)
    assert "why" in str(e) or "'y'" in str(e)
    assert (old.x, old.y) == (1, 2)        # the heap's class is untouched


# ---- freed and stale proxies ----

def test_freed_object(heap, connect):
    a = Acct(heap, balance=5, owner="x")
    b = Acct(heap)                         # allocated before the free: never a's slot
    other = connect()
    a_other = other.proxy(a.offset)
    off = a.offset
    heap.free(a)
    with pytest.raises(uniheap.FreedObjectError):
        a.balance
    with pytest.raises(uniheap.FreedObjectError):
        a.balance = 1
    with pytest.raises(uniheap.FreedObjectError):
        a.owner
    with pytest.raises(uniheap.FreedObjectError):
        a_other.balance                    # a proxy in another session
    with pytest.raises(uniheap.FreedObjectError):
        heap.proxy(off).balance            # a new proxy of the old offset
    with pytest.raises(uniheap.FreedObjectError):
        heap.free(a)                       # twice
    with pytest.raises((uniheap.FreedObjectError, TypeError)):
        b.peer = a
    with pytest.raises((uniheap.FreedObjectError, TypeError)):
        heap.roots["freed"] = a
    m = uniheap.PMap(heap)
    with pytest.raises((uniheap.FreedObjectError, TypeError)):
        m["freed"] = a
    assert b.peer is None and "freed" not in heap.roots and len(m) == 0
    repr(a)                                # no crash


def test_stale_proxy_after_slot_reuse(heap, connect):
    """A proxy of a freed object raises even once its slot holds a new
    object of the same class: references carry the slot's generation."""
    OFFSET = (1 << 48) - 1
    a = Acct(heap, balance=7, owner="old")
    old_ref, a_other = a.offset, connect().proxy(a.offset)
    heap.free(a)
    for _ in range(100_000):               # the allocator comes round to the slot
        b = Acct(heap, balance=8, owner="new")
        if b.offset & OFFSET == old_ref & OFFSET:
            break
        heap.free(b)
    else:
        pytest.fail("the freed slot was never reused")
    assert b.offset != old_ref             # same offset, another generation
    for p in (a, a_other):
        with pytest.raises(uniheap.FreedObjectError, match="generation"):
            p.balance
        with pytest.raises(uniheap.FreedObjectError):
            p.owner
        with pytest.raises(uniheap.FreedObjectError):
            p.balance = 1
        with pytest.raises(uniheap.FreedObjectError):
            with heap.atomic():
                p.balance
    with pytest.raises(uniheap.FreedObjectError, match="generation"):
        heap.proxy(old_ref)                # a saved reference, after the reuse
    with pytest.raises(uniheap.FreedObjectError):
        heap.free(a)
    assert (b.balance, b.owner) == (8, "new")
    assert heap.proxy(b.offset) == b


def test_freed_in_block(heap):
    a = Acct(heap, balance=1)
    with heap.atomic():
        heap.free(a)
    with pytest.raises(uniheap.FreedObjectError):
        a.balance


def test_freed_collections(heap):
    m = uniheap.PMap(heap, data={"a": 1})
    sm = uniheap.PSortedMap(heap, key=int, data={1: 1})
    pl = uniheap.PList(heap, [1])
    arr = uniheap.PArray(heap, "i64", 2)
    for c in (m, sm, pl, arr):
        heap.free(c)
    for op in (lambda: m["a"], lambda: len(m), lambda: m.__setitem__("b", 2), lambda: list(m),
               lambda: list(sm.range()), lambda: sm.first(), lambda: pl[0],
               lambda: pl.append(2), lambda: len(pl), lambda: arr[0],
               lambda: arr.__setitem__(0, 1)):
        with pytest.raises(uniheap.FreedObjectError):
            op()


def test_rolled_back_allocation(heap):
    got = []
    with pytest.raises(ZeroDivisionError):
        with heap.atomic():
            got.append(Acct(heap, balance=3))
            got.append(uniheap.PMap(heap))
            1 / 0
    a, m = got
    with pytest.raises(uniheap.FreedObjectError):
        a.balance
    with pytest.raises(uniheap.FreedObjectError):
        a.balance = 4
    with pytest.raises(uniheap.FreedObjectError):
        m["k"] = 1


def test_bogus_offsets(heap):
    a = Acct(heap)                         # zero payload: not a header
    size = heap.info()["heap_size"]
    for off in (a.offset + 16, a.offset + 8, a.offset + 1, 8, 1):
        with pytest.raises(uniheap.FreedObjectError):
            heap.proxy(off).class_name and heap.proxy(off).balance
    for off in (size, size + 4096, 2**62, 2**64 - 8, -8, 2**80):
        with pytest.raises((uniheap.FreedObjectError, ValueError, OverflowError)):
            heap.proxy(off).balance


# ---- closed heap ----

def test_closed_heap(heapd):
    heap = uniheap.connect(heapd.sock)
    a = Acct(heap, balance=5)
    m = uniheap.PMap(heap, data={"k": 1})
    pl = uniheap.PList(heap, [1])
    heap.roots["a"] = a
    off = a.offset
    heap.close()
    assert heap.closed
    ops = [lambda: a.balance, lambda: setattr(a, "balance", 1), lambda: a.owner,
           lambda: m["k"], lambda: len(m), lambda: m.__setitem__("x", 1), lambda: list(m),
           lambda: pl[0], lambda: pl.append(1), lambda: heap.roots["a"],
           lambda: heap.roots.__setitem__("b", a), lambda: len(heap.roots),
           lambda: Acct(heap, balance=1), lambda: uniheap.PMap(heap),
           lambda: heap.free(a), lambda: heap.proxy(off), lambda: heap.stats(),
           lambda: heap.info(), lambda: heap.check(), lambda: heap.atomic(lambda: 1)]
    for op in ops:
        with pytest.raises(uniheap.HeapClosedError):
            op()
    with pytest.raises(uniheap.HeapClosedError):
        with heap.atomic():
            pass
    repr(a)
    hash(a)
    heap.close()                           # idempotent
    with uniheap.connect(heapd.sock) as h2:
        assert h2.roots["a"].balance == 5


def test_close_inside_block_rolls_back(heapd):
    heap = uniheap.connect(heapd.sock)
    a = Acct(heap, balance=5)
    heap.roots["a"] = a
    try:
        with heap.atomic():
            a.balance = 6
            heap.close()
    except uniheap.HeapClosedError:
        pass
    assert heap.closed
    with uniheap.connect(heapd.sock) as h2:
        assert h2.roots["a"].balance == 5


# ---- heapd gone ----

def test_heapd_gone(heapd):
    """With heapd stopped, what needs it (registering a class) raises
    Disconnected; closing still works; nothing crashes."""
    heap = uniheap.connect(heapd.sock)
    a = Acct(heap, balance=1)
    heapd.stop()

    class Late(uniheap.PObject, name="t.bad.Late"):
        x = uniheap.i64()
    try:
        with pytest.raises(uniheap.Disconnected) as ei:
            Late(heap)
        assert isinstance(ei.value, ConnectionError) and str(ei.value)
        try:
            a.balance                      # the mapping may still be readable
        except uniheap.Error:
            pass
    finally:
        heap.close()
    assert heap.closed
    with pytest.raises(uniheap.Disconnected, match="heapd is not running"):
        uniheap.connect(heapd.sock, timeout=0)
    heapd.start()
    with uniheap.connect(heapd.sock) as h2:
        Late(h2, x=2)


# ---- keys and strings ----

def test_wrong_map_key_types(heap):
    maps = {str: uniheap.PMap(heap, key=str), bytes: uniheap.PMap(heap, key=bytes),
            int: uniheap.PSortedMap(heap, key=int)}
    wrong = {str: [b"k", 1, None], bytes: ["k", 1, bytearray(b"k")], int: ["1", b"1", 1.0]}
    for ktype, m in maps.items():
        for bad in wrong[ktype]:
            with pytest.raises(TypeError):
                m[bad] = 1
            with pytest.raises((TypeError, KeyError)):
                del m[bad]
        assert len(m) == 0
    sm = maps[int]
    sm[1] = 1
    with pytest.raises(TypeError):
        list(sm.range("a", "b"))
    with pytest.raises(TypeError):
        list(sm.items_from(b"x"))


SURROGATES = ["\ud800", "a\udfffb", "\udc80" * 3]


@pytest.mark.parametrize("s", SURROGATES, ids=range(len(SURROGATES)))
def test_lone_surrogates(heap, s):
    a = Acct(heap, owner="valid")
    with pytest.raises((ValueError, uniheap.Error)):   # UnicodeEncodeError is a ValueError
        a.owner = s
    with pytest.raises((ValueError, uniheap.Error)):
        Acct(heap, owner=s)
    assert a.owner == "valid"
    m = uniheap.PMap(heap)
    with pytest.raises((ValueError, uniheap.Error)):
        m[s] = 1
    with pytest.raises((ValueError, uniheap.Error)):
        m["k"] = s
    with pytest.raises((ValueError, uniheap.Error, KeyError)):
        m[s]
    pl = uniheap.PList(heap)
    with pytest.raises((ValueError, uniheap.Error)):
        pl.append(s)
    with pytest.raises((ValueError, uniheap.Error)):
        heap.roots[s] = a
    sm = uniheap.PSortedMap(heap, key=str)
    with pytest.raises((ValueError, uniheap.Error)):
        sm[s] = 1
    assert len(m) == 0 and len(pl) == 0 and len(sm) == 0 and len(heap.roots) == 0
    a.owner = "still fine ✓"
    assert a.owner == "still fine ✓"


# ---- limits ----

def test_block_bigger_than_the_log_area(heap):
    """300k element writes in one block: ~10 MiB of redo, ten times the
    session's 1 MiB log area. The log grows; the block commits whole, or
    rolls back whole."""
    arr = uniheap.PArray(heap, "i64", 300_000)
    with heap.atomic():
        for i in range(300_000):
            arr[i] = i + 1
    assert arr[0] == 1 and arr[1000] == 1001 and arr[299_999] == 300_000
    with pytest.raises(ZeroDivisionError):
        with heap.atomic():
            for i in range(300_000):
                arr[i] = -1
            1 / 0
    assert arr[0] == 1 and arr[299_999] == 300_000
    with heap.atomic():                    # the session goes on
        arr[0] = 5
    assert arr[0] == 5


def test_heap_full(heap):
    pl = uniheap.PList(heap)
    chunk = b"x" * (4 << 20)
    with pytest.raises(uniheap.HeapFull) as ei:
        for _ in range(40):                # 160 MiB > the 64 MiB heap
            b = Bag(heap)
            b.blob = chunk
            pl.append(b)
    assert isinstance(ei.value, MemoryError)
    assert len(pl) >= 1
    assert pl[0].blob == chunk             # what fitted is intact
    assert heap.stats()["allocs"] > 0


# ---- more edges ----

def test_dangling_references_after_free(heap):
    """Roots, fields and map entries that still name a freed object give
    FreedObjectError on use, never another object's data."""
    a = Acct(heap, balance=1)
    holder = Acct(heap, peer=a)
    m = uniheap.PMap(heap, data={"a": a})
    heap.roots["a"] = a
    heap.free(a)
    for get in (lambda: heap.roots["a"], lambda: holder.peer, lambda: m["a"]):
        with pytest.raises(uniheap.FreedObjectError):
            get().balance


def test_readonly_refuses_every_write(heap, connect):
    a = Acct(heap, balance=1)
    m = uniheap.PMap(heap, data={"k": 1})
    pl = uniheap.PList(heap, [1])
    heap.roots["a"], heap.roots["m"], heap.roots["pl"] = a, m, pl
    ro = connect(readonly=True)
    ra, rm, rpl = ro.roots["a"], ro.roots["m"], ro.roots["pl"]
    for op in (lambda: setattr(ra, "owner", "x"), lambda: rm.__setitem__("k", 2),
               lambda: rm.__delitem__("k"), lambda: rpl.append(2), lambda: rpl.pop(),
               lambda: ro.roots.__setitem__("b", ra), lambda: ro.roots.__delitem__("a"),
               lambda: ro.free(ra), lambda: uniheap.PMap(ro)):
        with pytest.raises(uniheap.ReadOnlyError):
            op()
    assert (a.balance, a.owner, dict(m), list(pl)) == (1, None, {"k": 1}, [1])
    assert set(heap.roots) == {"a", "m", "pl"}


def test_block_that_fills_the_heap(heap):
    """One block that allocates more than the heap holds raises HeapFull
    (not retried), rolls back whole, and leaves the heap consistent."""
    pl = uniheap.PList(heap)
    heap.roots["t.full.keep"] = pl
    calls = []

    def fill():
        calls.append(1)
        for _ in range(40):                # 160 MiB > the 64 MiB heap
            b = Bag(heap)
            b.blob = b"y" * (4 << 20)
            pl.append(b)

    with pytest.raises(uniheap.HeapFull):
        heap.atomic(fill)
    assert calls == [1] and not heap.in_block()
    assert len(pl) == 0
    heap.check()
    pl.append(Bag(heap, small=1))          # the space came back
    assert pl[0].small == 1


def test_int_and_str_subclasses(heap):
    import enum

    class Color(enum.IntEnum):
        RED = 7

    class Name(str):
        pass

    a = Acct(heap, balance=Color.RED, owner=Name("sub"))
    assert a.balance == 7 and type(a.balance) is int
    assert a.owner == "sub" and type(a.owner) is str
    m = uniheap.PMap(heap)
    m[Name("k")] = Color.RED
    assert m["k"] == 7 and type(m["k"]) is int


def test_parray_lengths(heap):
    empty = uniheap.PArray(heap, "i64", 0)
    assert len(empty) == 0 and list(empty) == []
    with pytest.raises(IndexError):
        empty[0]
    for bad in (-1, "3", 1.5):
        with pytest.raises((TypeError, ValueError)):
            uniheap.PArray(heap, "i64", bad)
    gen = uniheap.PArray(heap, "i16", (i * 2 for i in range(5)))
    assert list(gen) == [0, 2, 4, 6, 8]
    with pytest.raises(uniheap.ValueRangeError):
        uniheap.PArray(heap, "i8", [1, 2, 300])
