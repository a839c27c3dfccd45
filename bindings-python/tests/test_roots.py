"""heap.roots: a MutableMapping of named durable roots that survive a
reconnect and a heapd restart, and that heapctl shows."""

import json

import pytest

import uniheap


class Item(uniheap.PObject, name="t.roots.Item"):
    n = uniheap.i64()
    tag = uniheap.string()


def test_roots_mapping_protocol(heap):
    roots = heap.roots
    assert len(roots) == 0 and list(roots) == []
    a = Item(heap, n=1)
    b = Item(heap, n=2)
    roots["a"] = a
    roots["b ✓ ünïcode"] = b
    assert len(roots) == 2
    assert "a" in roots and "zz" not in roots
    assert roots["a"] == a and roots["a"].n == 1
    assert roots["b ✓ ünïcode"].n == 2
    assert sorted(roots) == sorted(["a", "b ✓ ünïcode"])
    assert dict(roots.items()) == {"a": a, "b ✓ ünïcode": b}
    assert roots.get("zz") is None
    roots["a"] = b                         # replace
    assert roots["a"] == b
    del roots["a"]
    assert "a" not in roots and len(roots) == 1
    with pytest.raises(KeyError):
        roots["a"]
    with pytest.raises(KeyError):
        del roots["a"]
    assert roots.pop("b ✓ ünïcode") == b
    assert len(roots) == 0


def test_root_values_of_every_kind(heap):
    heap.roots["obj"] = Item(heap, n=5)
    heap.roots["map"] = uniheap.PMap(heap, data={"k": "v"})
    heap.roots["smap"] = uniheap.PSortedMap(heap, key=int, data={3: 3, 1: 1})
    heap.roots["list"] = uniheap.PList(heap, [1, 2])
    heap.roots["arr"] = uniheap.PArray(heap, "i64", 3)
    assert isinstance(heap.roots["obj"], Item)
    assert heap.roots["map"]["k"] == "v"
    assert isinstance(heap.roots["smap"], uniheap.PSortedMap)
    assert list(heap.roots["smap"]) == [1, 3]
    assert list(heap.roots["list"]) == [1, 2]
    assert len(heap.roots["arr"]) == 3


def test_roots_refuse_non_persistent(heap):
    for bad in (1, "x", b"x", object(), [1]):
        with pytest.raises(TypeError):
            heap.roots["bad"] = bad
    assert "bad" not in heap.roots
    with pytest.raises(TypeError):
        heap.roots[1] = Item(heap)


def test_root_name_too_long(heap):
    with pytest.raises((ValueError, uniheap.Error)):
        heap.roots["x" * 5000] = Item(heap)
    assert len(heap.roots) == 0


def test_many_roots(heap):
    items = {f"r{i:04d}": Item(heap, n=i) for i in range(300)}
    with heap.atomic():
        for name, obj in items.items():
            heap.roots[name] = obj
    assert len(heap.roots) == 300
    assert sorted(heap.roots) == sorted(items)
    for name in list(heap.roots)[:100]:
        del heap.roots[name]
    assert len(heap.roots) == 200
    for name in heap.roots:
        assert heap.roots[name].n == int(name[1:])


def test_root_in_rolled_back_block(heap):
    with pytest.raises(ZeroDivisionError):
        with heap.atomic():
            heap.roots["gone"] = Item(heap, n=1)
            1 / 0
    assert "gone" not in heap.roots


def test_roots_survive_reconnect(heapd, connect):
    h = connect()
    h.roots["keep"] = Item(h, n=77, tag="kept")
    m = uniheap.PMap(h, key=bytes)
    m[b"\x00k"] = "v"
    h.roots["keepmap"] = m
    off = h.roots["keep"].offset
    h.close()
    h2 = connect()
    it = h2.roots["keep"]
    assert it.offset == off and it.n == 77 and it.tag == "kept"
    assert h2.roots["keepmap"][b"\x00k"] == "v"


def test_roots_survive_heapd_restart(heapd, connect):
    h = connect()
    with h.atomic():
        head = None
        for i in range(100):
            head = Item(h, n=i, tag=f"item {i}")
            h.roots[f"item{i}"] = head
        h.roots["map"] = uniheap.PMap(h, data={"a": 1, "b": "two"})
        h.roots["sorted"] = uniheap.PSortedMap(h, key=int, data={i: -i for i in range(50)})
    h.close()
    heapd.restart()
    h2 = connect()
    assert len(h2.roots) == 102
    for i in range(100):
        it = h2.roots[f"item{i}"]
        assert it.n == i and it.tag == f"item {i}"
    assert dict(h2.roots["map"]) == {"a": 1, "b": "two"}
    assert list(h2.roots["sorted"].items()) == [(i, -i) for i in range(50)]
    # and the restarted heapd takes new work
    h2.roots["after"] = Item(h2, n=1)
    assert h2.roots["after"].n == 1


def test_heapctl_shows_python_roots(heap, heapd):
    heap.roots["py.first"] = Item(heap, n=1)
    heap.roots["py.map"] = uniheap.PMap(heap)
    r = heapd.heapctl("roots")
    assert r.returncode == 0, r.stderr
    assert "py.first" in r.stdout and "t.roots.Item" in r.stdout
    assert "py.map" in r.stdout
    r = heapd.heapctl("--json", "roots")
    assert r.returncode == 0, r.stderr
    roots = {e["name"]: e for e in json.loads(r.stdout)["roots"]}
    assert set(roots) == {"py.first", "py.map"}
    assert roots["py.first"]["class_name"] == "t.roots.Item"
    assert int(roots["py.first"]["offset"]) == heap.roots["py.first"].offset
    assert int(roots["py.map"]["offset"]) == heap.roots["py.map"].offset
    del heap.roots["py.first"]
    r = heapd.heapctl("--json", "roots")
    assert [e["name"] for e in json.loads(r.stdout)["roots"]] == ["py.map"]


def test_heapctl_classes_show_python_class(heap, heapd):
    Item(heap, n=1)
    r = heapd.heapctl("--json", "classes")
    assert r.returncode == 0, r.stderr
    classes = {c["name"]: c for c in json.loads(r.stdout)["classes"]}
    assert "t.roots.Item" in classes
    assert [f["name"] for f in classes["t.roots.Item"]["fields"]] == ["n", "tag"]
