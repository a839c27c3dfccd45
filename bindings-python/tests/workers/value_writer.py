"""Replaces bytes values in a PMap, a PSortedMap and a PList over and over.

Usage: value_writer.py COUNT
Roots: "t.mp.vals" (PMap, key "k"), "t.mp.svals" (PSortedMap, keys
"a".."e") and "t.mp.list" (PList of 4 items). Step i, each write a single
operation outside blocks (its commit frees the value it replaces):
vals["k"] = value(i); svals[KEYS[i % 5]] = value(i); list[i % 4] =
value(i); every seventh step also deletes svals["c"] (put back by a later
step). Exits 0 when done.
"""

import sys

import uniheap
from string_writer import text

KEYS = "abcde"


def value(i):
    return text(i).encode()


def valid(v):
    head, _, _ = v.partition(b":")
    return head.isdigit() and value(int(head)) == v


def main():
    count = int(sys.argv[1])
    with uniheap.connect() as heap:
        vals, svals, lst = (heap.roots[n] for n in ("t.mp.vals", "t.mp.svals", "t.mp.list"))
        for i in range(1, count + 1):
            vals["k"] = value(i)
            svals[KEYS[i % 5]] = value(i)
            lst[i % 4] = value(i)
            if i % 7 == 0:
                svals.pop("c", None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
