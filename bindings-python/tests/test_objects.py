"""Persistent objects from Python: every field type through its round trip
(with boundaries), references and object graphs, proxies and their identity,
generic proxies of classes this process never declared, heap info/stats."""

import math
import os
import struct
import textwrap

import pytest

import uniheap
from conftest import run_python


class Kinds(uniheap.PObject, name="t.obj.Kinds"):
    tiny = uniheap.i8()
    small = uniheap.i16()
    mid = uniheap.i32()
    big = uniheap.i64()
    single = uniheap.f32()
    double = uniheap.f64()
    flag = uniheap.bool_()
    text = uniheap.string()
    blob = uniheap.bytes_()
    other = uniheap.ref()


class Node(uniheap.PObject, name="t.obj.Node"):
    value = uniheap.i64()
    next = uniheap.ref("t.obj.Node")


class Account(uniheap.PObject, name="t.obj.Account"):
    balance = uniheap.i64()
    owner = uniheap.string()


def f32(x):
    """x rounded to the nearest single-precision float."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


# ---- declarations ----

def test_class_declaration_metadata():
    assert Kinds.__uniheap_name__ == "t.obj.Kinds"
    fields = Kinds.__uniheap_fields__
    assert isinstance(fields, tuple)
    assert [f.name for f in fields] == ["tiny", "small", "mid", "big", "single", "double",
                                        "flag", "text", "blob", "other"]
    assert [f.type for f in fields] == ["i8", "i16", "i32", "i64", "f32", "f64", "bool",
                                        "string", "bytes", "ref"]
    assert all(isinstance(f, uniheap.Field) for f in fields)
    assert all(f.owner == "t.obj.Kinds" for f in fields)
    assert Node.__uniheap_fields__[1].target in ("t.obj.Node", Node)
    assert Kinds.__uniheap_fields__[9].target is None


def test_field_index_is_the_declaration_order(heap):
    class Fresh(uniheap.PObject, name="t.obj.Fresh"):
        a = uniheap.i8()
        b = uniheap.f64()
        c = uniheap.string()
    # the position in the layout is known from the declaration
    assert [f.index for f in Fresh.__uniheap_fields__] == [0, 1, 2]
    Fresh(heap)
    fields = Fresh.__uniheap_fields__
    assert [f.index for f in fields] == [0, 1, 2]
    # heapd assigned the offsets: after the 16-byte header, naturally aligned
    assert fields[0].offset == 16
    assert fields[1].offset % 8 == 0 and fields[1].offset > 16
    assert fields[2].offset == fields[1].offset + 8


def test_fresh_object_is_zeroed(heap):
    k = Kinds(heap)
    assert k.tiny == 0 and k.small == 0 and k.mid == 0 and k.big == 0
    assert k.single == 0.0 and k.double == 0.0
    assert k.flag is False
    assert k.text is None and k.blob is None and k.other is None


def test_constructor_sets_fields(heap):
    a = Account(heap, balance=10, owner="ann")
    assert a.balance == 10
    assert a.owner == "ann"
    assert isinstance(a, Account) and isinstance(a, uniheap.PObject)
    assert isinstance(a, uniheap.Proxy)
    assert a.class_name == "t.obj.Account"
    assert isinstance(a.class_id, int) and a.class_id > 0
    assert isinstance(a.offset, int) and a.offset > 0
    assert a.heap is heap
    # registration filled in the layout: first field right after the header
    offs = [f.offset for f in Account.__uniheap_fields__]
    assert offs[0] >= 16 and offs[1] > offs[0]


def test_constructor_unknown_field(heap):
    with pytest.raises((AttributeError, TypeError)):
        Account(heap, balance=1, nosuchfield=2)


# ---- integer fields: round trips and boundaries ----

INT_LIMITS = {
    "tiny": (-2**7, 2**7 - 1),
    "small": (-2**15, 2**15 - 1),
    "mid": (-2**31, 2**31 - 1),
    "big": (-2**63, 2**63 - 1),
}


@pytest.mark.parametrize("field", sorted(INT_LIMITS))
def test_int_field_boundaries(heap, field):
    lo, hi = INT_LIMITS[field]
    k = Kinds(heap)
    for v in (lo, lo + 1, -1, 0, 1, hi - 1, hi):
        setattr(k, field, v)
        got = getattr(k, field)
        assert got == v and type(got) is int
    setattr(k, field, 7)
    for bad in (hi + 1, lo - 1, 2**64, -2**64, 2**200):
        with pytest.raises(uniheap.ValueRangeError) as ei:
            setattr(k, field, bad)
        assert isinstance(ei.value, ValueError)
        assert isinstance(ei.value, uniheap.Error)
        assert getattr(k, field) == 7      # unchanged by the failed store


def test_int_field_boundaries_in_constructor(heap):
    k = Kinds(heap, tiny=-128, small=32767, mid=-2**31, big=2**63 - 1)
    assert (k.tiny, k.small, k.mid, k.big) == (-128, 32767, -2**31, 2**63 - 1)
    with pytest.raises(uniheap.ValueRangeError):
        Kinds(heap, tiny=128)


def test_int_field_boundaries_in_block(heap):
    k = Kinds(heap)
    with heap.atomic():
        k.tiny = 127
        k.big = -2**63
    assert k.tiny == 127 and k.big == -2**63
    with pytest.raises(uniheap.ValueRangeError):
        with heap.atomic():
            k.tiny = -5
            k.tiny = 1000
    assert k.tiny == 127                   # the block was rolled back


@pytest.mark.parametrize("bad", ["12", 1.5, b"1", [1], None, object()])
def test_int_field_wrong_type(heap, bad):
    k = Kinds(heap, big=3)
    with pytest.raises(TypeError):
        k.big = bad
    with pytest.raises(TypeError):
        k.tiny = bad
    assert k.big == 3


# ---- floats ----

def test_f64_round_trip(heap):
    k = Kinds(heap)
    for v in (0.1, -0.0, 1e308, -1e-308, 5e-324, math.pi, float("inf"), float("-inf")):
        k.double = v
        got = k.double
        assert type(got) is float
        assert got == v and math.copysign(1, got) == math.copysign(1, v)
    k.double = float("nan")
    assert math.isnan(k.double)


def test_f32_rounding(heap):
    k = Kinds(heap)
    for v in (0.1, 1 / 3, 3.5, -2.25, 1e-30, 16777217.0, float("inf")):
        k.single = v
        assert k.single == f32(v)
        assert type(k.single) is float
    k.single = 0.1
    assert k.single != 0.1                 # really stored in 32 bits
    k.single = float("nan")
    assert math.isnan(k.single)


def test_float_field_wrong_type(heap):
    k = Kinds(heap, double=1.5)
    for bad in ("1.5", b"x", None, [1.0]):
        with pytest.raises(TypeError):
            k.double = bad
    assert k.double == 1.5


# ---- bool ----

def test_bool_round_trip(heap):
    k = Kinds(heap)
    k.flag = True
    assert k.flag is True
    k.flag = False
    assert k.flag is False
    k2 = Kinds(heap, flag=True)
    assert k2.flag is True


# ---- strings and bytes ----

STRINGS = ["", "a", "héllo wörld", "✓ ünïcödé 🐍 \U0010ffff", "nul\x00inside",
           "x" * 70000, "line\nbreak\ttab"]


@pytest.mark.parametrize("s", STRINGS, ids=range(len(STRINGS)))
def test_string_round_trip(heap, s):
    k = Kinds(heap)
    k.text = s
    got = k.text
    assert type(got) is str and got == s


BYTES = [b"", b"\x00", b"\x00\x01\x00\xff", bytes(range(256)) * 300, b"plain"]


@pytest.mark.parametrize("b", BYTES, ids=range(len(BYTES)))
def test_bytes_round_trip(heap, b):
    k = Kinds(heap)
    k.blob = b
    got = k.blob
    assert type(got) is bytes and got == b


def test_string_and_bytes_null(heap):
    k = Kinds(heap, text="t", blob=b"b")
    k.text = None
    k.blob = None
    assert k.text is None and k.blob is None


def test_string_replace_many_times(heap):
    """Each store makes a new persistent value; the old one must not leak
    into reads."""
    k = Kinds(heap)
    for i in range(300):
        k.text = f"value-{i}"
        k.blob = bytes([i % 256]) * (i % 17)
    assert k.text == "value-299"
    assert k.blob == bytes([299 % 256]) * (299 % 17)


def test_string_bytes_wrong_types(heap):
    k = Kinds(heap, text="keep", blob=b"keep")
    for bad in (b"bytes", 1, 1.0, ["x"]):
        with pytest.raises(TypeError):
            k.text = bad
    for bad in ("str", 1, 1.0, [1]):
        with pytest.raises(TypeError):
            k.blob = bad
    assert k.text == "keep" and k.blob == b"keep"


def test_string_in_constructor_and_block(heap):
    a = Account(heap, owner="first")
    with heap.atomic():
        a.owner = "second ✓"
        assert a.owner == "second ✓"        # the block sees its own write
    assert a.owner == "second ✓"


# ---- references ----

def test_ref_round_trip(heap):
    a = Node(heap, value=1)
    b = Node(heap, value=2)
    a.next = b
    got = a.next
    assert got == b
    assert isinstance(got, Node)
    assert got.value == 2
    assert got.offset == b.offset
    assert hash(got) == hash(b)
    a.next = None
    assert a.next is None


def test_untyped_ref_holds_any_object(heap):
    k = Kinds(heap)
    a = Account(heap, balance=5)
    k.other = a
    assert k.other == a and isinstance(k.other, Account)
    k.other = k                            # itself
    assert k.other == k
    m = uniheap.PMap(heap)
    m["x"] = 1
    k.other = m
    assert isinstance(k.other, uniheap.PMap) and k.other["x"] == 1


def test_typed_ref_refuses_other_class(heap):
    n = Node(heap)
    a = Account(heap)
    with pytest.raises(TypeError):         # uniheap.TypeMismatch is a TypeError
        n.next = a
    assert n.next is None


@pytest.mark.parametrize("bad", [1, "str", b"bytes", 1.5, object(), [1]])
def test_ref_refuses_non_persistent(heap, bad):
    n = Node(heap)
    with pytest.raises(TypeError) as ei:
        n.next = bad
    msg = str(ei.value)                    # a message with a hint
    assert "next" in msg
    assert any(w in msg for w in ("persistent", "PObject", "proxy")), msg
    assert n.next is None


def test_linked_list_of_1000(heap):
    with heap.atomic():
        head = None
        for i in reversed(range(1000)):
            head = Node(heap, value=i, next=head)
        heap.roots["t.obj.list"] = head
    values = []
    p = heap.roots["t.obj.list"]
    while p is not None:
        values.append(p.value)
        p = p.next
    assert values == list(range(1000))


def test_linked_list_seen_by_another_connection(heap, connect):
    head = None
    for i in reversed(range(1000)):
        head = Node(heap, value=i * 3, next=head)
    heap.roots["t.obj.list2"] = head
    other = connect()
    p = other.roots["t.obj.list2"]
    n = 0
    while p is not None:
        assert p.value == n * 3
        n += 1
        p = p.next
    assert n == 1000


def test_cycle(heap):
    a = Node(heap, value=1)
    b = Node(heap, value=2)
    a.next = b
    b.next = a
    assert a.next.next == a
    assert a.next.next.next == b
    c = a
    for _ in range(101):
        c = c.next
    assert c == b
    heap.roots["t.obj.cycle"] = a
    assert heap.roots["t.obj.cycle"].next.next.value == 1


def test_proxy_identity(heap, connect):
    a = Account(heap, balance=1)
    b = Account(heap, balance=1)
    assert a != b
    again = heap.proxy(a.offset)
    assert again == a and hash(again) == hash(a)
    assert isinstance(again, Account)
    assert {a, again, b} == {a, b}
    # a proxy of another heap connection is another proxy
    other = connect()
    same_obj = other.proxy(a.offset)
    assert same_obj.balance == 1
    assert a != 5 and a != "x"


def test_proxy_is_live_not_a_copy(heap, connect):
    a = Account(heap, balance=1)
    other = connect()
    b = other.proxy(a.offset)
    a.balance = 42
    assert b.balance == 42
    b.owner = "via other"
    assert a.owner == "via other"


def test_unknown_attribute(heap):
    a = Account(heap)
    with pytest.raises(AttributeError):
        a.nosuch
    with pytest.raises(AttributeError):
        a.nosuch = 1


# ---- generic proxies: classes this process never declared ----

MAKER = textwrap.dedent("""
    import sys, uniheap

    class Gadget(uniheap.PObject, name="t.gen.Gadget"):
        count = uniheap.i32()
        ratio = uniheap.f64()
        label = uniheap.string()
        on = uniheap.bool_()
        data = uniheap.bytes_()
        link = uniheap.ref("t.gen.Gadget")

    with uniheap.connect() as h:
        with h.atomic():
            a = Gadget(h, count=-7, ratio=2.5, label="gadget ✓", on=True, data=b"\\x00z")
            b = Gadget(h, count=8, label="second", link=a)
            a.link = b
            h.roots["t.gen.a"] = a
    print("ok")
""")


def test_asdict_and_astuple(heap):
    """All fields of an object in one call: by name or in declaration
    order, each as the field gives it, outside and inside a block (where
    the block's own writes show)."""
    other = Node(heap, value=1)
    k = Kinds(heap, tiny=-8, small=300, mid=-70000, big=2**40, single=1.5, double=-0.25,
              flag=True, text="héllo", blob=b"\x00\xff", other=other)
    want = {"tiny": -8, "small": 300, "mid": -70000, "big": 2**40, "single": 1.5,
            "double": -0.25, "flag": True, "text": "héllo", "blob": b"\x00\xff", "other": other}
    assert uniheap.asdict(k) == want
    assert list(uniheap.asdict(k)) == [f.name for f in Kinds.__uniheap_fields__]
    assert uniheap.astuple(k) == tuple(want.values())
    assert uniheap.asdict(Kinds(heap)) == dict.fromkeys(want, 0) | {
        "single": 0.0, "double": 0.0, "flag": False, "text": None, "blob": None, "other": None}
    with heap.atomic():
        k.mid = 5
        k.text = "in the block"
        k.tiny = 1
        got = uniheap.asdict(k)
        assert got == want | {"mid": 5, "text": "in the block", "tiny": 1}
        fresh = Account(heap, balance=3, owner="new")
        assert uniheap.astuple(fresh) == (3, "new")
    assert uniheap.asdict(k) == got


def test_asdict_errors(heap):
    a = Account(heap, balance=1, owner="x")
    heap.free(a)
    with pytest.raises(uniheap.FreedObjectError):
        uniheap.asdict(a)
    for bad in (42, "text", uniheap.PMap(heap)):
        with pytest.raises(TypeError, match="asdict"):
            uniheap.asdict(bad)
        with pytest.raises(TypeError, match="astuple"):
            uniheap.astuple(bad)


def test_generic_proxy_of_undeclared_class(heap, heapd):
    r = run_python(["-c", MAKER], heapd)
    assert r.returncode == 0, r.stderr
    a = heap.roots["t.gen.a"]
    assert isinstance(a, uniheap.PObject)
    assert a.class_name == "t.gen.Gadget"
    assert [f.name for f in type(a).__uniheap_fields__] == [
        "count", "ratio", "label", "on", "data", "link"]
    assert a.count == -7 and a.ratio == 2.5 and a.label == "gadget ✓"
    assert a.on is True and a.data == b"\x00z"
    assert uniheap.astuple(a)[:5] == (-7, 2.5, "gadget ✓", True, b"\x00z")
    b = a.link
    assert isinstance(b, uniheap.PObject) and b.class_name == "t.gen.Gadget"
    assert b.count == 8 and b.label == "second" and b.link == a
    r_ = repr(a)
    assert "t.gen.Gadget" in r_
    for name in ("count", "label"):
        assert name in r_
    # writable by field name, range-checked by the field's type
    a.count = 2**31 - 1
    assert a.count == 2**31 - 1
    with pytest.raises(uniheap.ValueRangeError):
        a.count = 2**31
    with pytest.raises(AttributeError):
        a.nosuch
    with heap.atomic():
        a.label = "changed in python"
        b.link = None
    assert a.label == "changed in python" and b.link is None
    assert any(c.get("name") == "t.gen.Gadget" for c in heap.classes())


# ---- heap: connect, info, stats ----

def test_connect_context_manager(heapd):
    with uniheap.connect(heapd.sock) as h:
        assert not h.closed
        Account(h, balance=1)
    assert h.closed
    h.close()                              # idempotent
    assert h.closed


def test_connect_from_environment(heapd, monkeypatch):
    monkeypatch.setenv("UNIHEAP_SOCKET", heapd.sock)
    assert uniheap.default_socket() == heapd.sock
    with uniheap.connect() as h:
        a = Account(h, balance=3)
        assert a.balance == 3


def test_connect_to_nothing(tmp_dir):
    with pytest.raises(uniheap.Disconnected) as ei:
        uniheap.connect(str(tmp_dir / "no-such.sock"))
    assert isinstance(ei.value, ConnectionError)


def test_info(heap, heapd):
    info = heap.info()
    assert info["heap_size"] == 64 * 1024 * 1024
    assert info["format_version"] == uniheap.FORMAT_VERSION
    assert info["readonly"] in (False, 0)
    assert info["durability"] in ("memory", 3)
    assert os.path.samefile(info["path"], heapd.heap)
    assert isinstance(info["session"], int)
    assert isinstance(uniheap.__version__, str) and uniheap.__version__


def test_stats(heap):
    s0 = heap.stats()
    for key in ("allocs", "commits", "aborts", "conflicts", "barriers", "retries"):
        assert isinstance(s0[key], int), key
    with heap.atomic():
        Account(heap, balance=1)
        Account(heap, balance=2)
    s1 = heap.stats()
    assert s1["allocs"] >= s0["allocs"] + 2
    assert s1["commits"] >= s0["commits"] + 1
    assert s1["barriers"] > s0["barriers"]
    with pytest.raises(RuntimeError):
        with heap.atomic():
            Account(heap, balance=3)
            raise RuntimeError("roll back")
    s2 = heap.stats()
    assert s2["aborts"] == s1["aborts"] + 1
    assert s2["commits"] == s1["commits"]


def test_readonly_connection(heap, connect):
    a = Account(heap, balance=9, owner="ro")
    heap.roots["t.obj.ro"] = a
    ro = connect(readonly=True)
    assert ro.readonly
    b = ro.roots["t.obj.ro"]
    assert b.balance == 9 and b.owner == "ro"
    with pytest.raises(uniheap.ReadOnlyError):
        b.balance = 10
    with pytest.raises(uniheap.ReadOnlyError):
        Account(ro, balance=1)
    with ro.atomic():                      # a read-only snapshot block
        assert b.balance == 9
    assert a.balance == 9


def test_heap_check(heap):
    head = None
    for i in range(50):
        head = Node(heap, value=i, next=head)
    heap.roots["t.obj.check"] = head
    assert heap.check() >= 50


# ---- classes with behaviour, and inheritance ----

class Wallet(uniheap.PObject, name="t.obj.Wallet"):
    KIND = "wallet"                        # a plain class attribute, not a field
    cents = uniheap.i64()
    label = uniheap.string()

    def deposit(self, n):
        self.cents += n
        return self.cents

    @property
    def euros(self):
        return self.cents / 100


def test_methods_and_properties(heap):
    w = Wallet(heap, cents=150)
    assert [f.name for f in Wallet.__uniheap_fields__] == ["cents", "label"]
    assert w.KIND == "wallet"
    assert w.deposit(50) == 200
    assert w.euros == 2.0
    assert heap.proxy(w.offset).deposit(1) == 201
    with pytest.raises(AttributeError):
        w.not_a_field = 1                  # proxies hold no Python state


class Base(uniheap.PObject, name="t.obj.Base"):
    a = uniheap.i64()

    def describe(self):
        return f"{self.class_name}:{self.a}"


class Derived(Base, name="t.obj.Derived"):
    b = uniheap.string()


def test_inheritance(heap):
    d = Derived(heap, a=1, b="x")
    assert [f.name for f in Derived.__uniheap_fields__] == ["a", "b"]
    assert isinstance(d, Base) and isinstance(d, Derived)
    assert (d.a, d.b) == (1, "x")
    d.a = 2                                # the inherited field on a Derived object
    assert d.describe() == "t.obj.Derived:2"
    base = Base(heap, a=5)
    assert not hasattr(base, "b")
    heap.roots["d"] = d
    got = heap.roots["d"]
    assert type(got) is Derived and got.b == "x"
    assert base.class_id != d.class_id
