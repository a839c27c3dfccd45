"""Replaces a string field over and over.

Usage: string_writer.py COUNT
Object: root "t.mp.cell" with fields n (i64) and s (string). Step i sets,
in one block, n = i and s = text(i) (see text() below). Exits 0 when done.
"""

import sys

import uniheap


def text(i):
    return f"{i}:" + chr(65 + i % 26) * (i % 61)


def main():
    count = int(sys.argv[1])
    with uniheap.connect() as heap:
        cell = heap.roots["t.mp.cell"]
        for i in range(1, count + 1):
            with heap.atomic():
                cell.n = i
                cell.s = text(i)
    return 0


if __name__ == "__main__":
    sys.exit(main())
