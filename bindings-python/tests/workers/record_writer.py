"""Rewrites every field of one record, in one block per step.

Usage: record_writer.py COUNT
Object: root "t.mp.rec" of class "t.mp.Rec" (below). Step i sets, in one
block, a = b = c = i, name = text(i) and data = blob(i). Exits 0 when done.
"""

import sys

import uniheap
from string_writer import text


class Rec(uniheap.PObject, name="t.mp.Rec"):
    a = uniheap.i64()
    name = uniheap.string()
    b = uniheap.i32()
    data = uniheap.bytes_()
    c = uniheap.i64()


def blob(i):
    return text(i).encode() * 3


def main():
    count = int(sys.argv[1])
    with uniheap.connect() as heap:
        rec = heap.roots["t.mp.rec"]
        for i in range(1, count + 1):
            with heap.atomic():
                rec.a = rec.b = rec.c = i
                rec.name = text(i)
                rec.data = blob(i)
    return 0


if __name__ == "__main__":
    sys.exit(main())
