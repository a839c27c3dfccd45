"""Replaces str and bytes values of a PMap over and over, their lengths
crossing the 128 bytes a hash map keeps in a key's entry.

Usage: inline_writer.py COUNT
Root "t.inl.map" (PMap, str keys "s", "b" and "gone"). Step i, each write
a single operation outside blocks (its commit frees the entry or object it
replaces): m["s"] = text(i); m["b"] = value(i); every fifth step deletes
"gone", the next one puts it back (value(i)). Exits 0 when done.
"""

import sys

import uniheap


def text(i):
    """i, then a run of one letter: 98 to 165 UTF-8 bytes as i goes."""
    return f"{i}:" + chr(65 + i % 26) * (96 + i % 64)


def value(i):
    return text(i).encode()


def valid(v):
    """v is text(i) or value(i) of the i it starts with."""
    head = v.partition(":" if isinstance(v, str) else b":")[0]
    if not head.isdigit():
        return False
    i = int(head)
    return v == (text(i) if isinstance(v, str) else value(i))


def main():
    count = int(sys.argv[1])
    with uniheap.connect() as heap:
        m = heap.roots["t.inl.map"]
        for i in range(1, count + 1):
            m["s"] = text(i)
            m["b"] = value(i)
            if i % 5 == 0:
                m.pop("gone", None)
            elif i % 5 == 1:
                m["gone"] = value(i)
    return 0


if __name__ == "__main__":
    sys.exit(main())
