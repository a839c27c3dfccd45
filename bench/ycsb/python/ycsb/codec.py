"""The byte encoding of a record for the stores that keep bytes (LMDB;
Chronicle Map on the Java side), the same in every language so that one
language can read what another wrote:

    repeated, in field order:  u16 LE name length | name (UTF-8)
                               u32 LE value length | value

uniheap needs none of this: its records are objects with fields.
"""
import struct

_NAME = struct.Struct("<H")
_VALUE = struct.Struct("<I")


def encode(record):
    parts = []
    for name, value in record.items():
        n = name.encode()
        parts += (_NAME.pack(len(n)), n, _VALUE.pack(len(value)), value)
    return b"".join(parts)


def decode(data, fields=None):
    """The record's fields as a dict (only those in fields when given)."""
    out = {}
    mv = memoryview(data)
    i, end = 0, len(data)
    while i < end:
        (n,) = _NAME.unpack_from(mv, i)
        i += 2
        name = str(mv[i:i + n], "utf-8")
        i += n
        (v,) = _VALUE.unpack_from(mv, i)
        i += 4
        if fields is None or name in fields:
            out[name] = bytes(mv[i:i + v])
        i += v
    return out
