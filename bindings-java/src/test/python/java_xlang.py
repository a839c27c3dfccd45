"""The Python side of the Java binding's cross-language tests (XlangTest).

Usage: java_xlang.py COMMAND   (the heap's socket comes from $UNIHEAP_SOCKET)

  check-java  reads what XlangTest.javaObjectsReadFromPythonAndC created in
              Java (root "pyx.alice" and the collections beside it) with the
              Python binding's own Person class (the same layout: one class in
              the heap), checks every value, then updates alice: age 31,
              name "Alice/py", pyx.map["py"] = "from python"; reads
              root "pyx.inline" (inline_values(), the short ones kept in their
              entries) and appends "/py" to its "s128".
  create-py   creates, with a class Java never declares, root "pyj.gadget":
              py.Gadget {name "gizmo", size 3 (i32), weight 1.25 (f64),
              parts PList [1, "two", None], owner ref to itself}; and root
              "pyj.inline", a PMap of inline_values().

Prints one line per failed check and "<command>: N passed, N failed"; exits 0
when every check passed.
"""
import sys

import uniheap


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


class Gadget(uniheap.PObject, name="py.Gadget"):
    name = uniheap.string()
    size = uniheap.i32()
    weight = uniheap.f64()
    parts = uniheap.ref(uniheap.PList)
    owner = uniheap.ref()


# The inline-values map of tests/c/prog_py_xlang.c: for n in INL_LENS,
# "s<n>" -> inl_text(n), "b<n>" -> inl_bytes(n); a hash map keeps a value
# of up to 128 bytes in its entry, a longer one as an object.
INL_LENS = (0, 1, 128, 129)


def inl_text(n):
    """n UTF-8 bytes: U+00E9 n // 2 times, then "x" if n is odd."""
    return "\u00e9" * (n // 2) + "x" * (n % 2)


def inl_bytes(n):
    """n bytes, byte i being i * 7 mod 256."""
    return bytes(i * 7 % 256 for i in range(n))


def inline_values():
    want = {}
    for n in INL_LENS:
        want[f"s{n}"] = inl_text(n)
        want[f"b{n}"] = inl_bytes(n)
    return want


passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print(f"FAILED: {what}")


def check_java(heap):
    alice = heap.roots["pyx.alice"]
    check(isinstance(alice, Person), f"alice is a Person, not {type(alice)}")
    bob = alice.friend
    check((alice.name, alice.age, alice.score, alice.active, alice.tag) ==
          ("Alice", 30, 97.5, True, b"\x00A\x00"), "alice's fields")
    check((alice.level, alice.rank, alice.weight, alice.id) == (-5, 1000, 0.5, 1 << 40),
          "alice's small fields")
    check((bob.name, bob.age, bob.id, bob.tag) == ("B\u00f8b \U0001f40d", 40, -1, b""), "bob")
    check(bob.friend == alice, "bob.friend is alice")
    m = heap.roots["pyx.map"]
    check(m["alice"] == alice and m["n"] == 42 and m["pi"] == 3.5, "map refs and numbers")
    check(m["s"] == "text \u2713" and m["b"] == b"\x00\xff" and m["t"] is True, "map values")
    check("none" in m and m["none"] is None, "map None")
    check(list(heap.roots["pyx.list"]) == [1, "two", 3.0, None, alice], "list")
    check(list(heap.roots["pyx.arr"]) == [0, -1, 2, -3, 4], "array")
    smap = heap.roots["pyx.smap"]
    check([k for k, _ in smap.items()] == [b"k%03d" % i for i in range(50)], "sorted keys")
    check(dict(heap.roots["pyx.imap"]) == {i: i * i for i in range(-5, 100)}, "imap")
    inl = heap.roots["pyx.inline"]
    for k, v in inline_values().items():
        check(type(inl[k]) is type(v) and inl[k] == v, f"pyx.inline[{k!r}]")
    check(dict(inl.items()) == inline_values(), "pyx.inline's items()")
    with heap.atomic():
        inl["s128"] = inl_text(128) + "/py"
        alice.age = 31
        alice.name = "Alice/py"
        m["py"] = "from python"


def create_py(heap):
    with heap.atomic():
        g = Gadget(heap, name="gizmo", size=3, weight=1.25,
                   parts=uniheap.PList(heap, [1, "two", None]))
        g.owner = g
        heap.roots["pyj.gadget"] = g
        heap.roots["pyj.inline"] = uniheap.PMap(heap, data=inline_values())
    check(True, "created")


def main():
    cmd = sys.argv[1]
    with uniheap.connect() as heap:
        {"check-java": check_java, "create-py": create_py}[cmd](heap)
    print(f"{cmd}: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
