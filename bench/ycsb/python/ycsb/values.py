"""Field values: random printable bytes, or with dataintegrity=true the
deterministic value YCSB derives from the key and the field name."""

import functools

# Java's String.hashCode is a polynomial in 31 over the UTF-16 code units,
# wrapped to 32 bits; keys and field names are ASCII, so bytes do.
_MASK32 = 0xFFFFFFFF


def _java_hash_extend(h, s):
    """The hashCode of a string whose prefix hashes to h, extended by s
    (unsigned 32-bit)."""
    for c in s.encode():
        h = (h * 31 + c) & _MASK32
    return h


def _signed32(h):
    return h - (1 << 32) if h & 0x80000000 else h


@functools.lru_cache(maxsize=1 << 17)
def deterministic_value(key, field, size):
    """What YCSB's buildDeterministicValue makes: "key:field", then, while
    shorter than size, ':' and the Java hashCode of everything so far
    (colon included), cut to size. Returns bytes. Cached: checking a
    record computes all of its fields' values, and zipfian keys repeat."""
    s = f"{key}:{field}"
    h = _java_hash_extend(0, s)
    parts = [s]
    n = len(s)
    while n < size:
        h = (h * 31 + 58) & _MASK32            # ':' joins the hash first
        num = str(_signed32(h))
        parts.append(":")
        parts.append(num)
        n += 1 + len(num)
        h = _java_hash_extend(h, num)
    return "".join(parts)[:size].encode()


# YCSB's RandomByteIterator makes each group of 6 bytes from one random
# int: ' ' plus 5, 6 or 7 of its bits, masks 31, 63, 95 repeating. The same
# per-position distributions, drawn from random bytes, translated in bulk.
_TABLES = [bytes(32 + (b & m) for b in range(256)) for m in (31, 63, 95)]


def random_value(rng, size):
    """size random printable bytes (codes 32..127), as YCSB draws them."""
    raw = rng.randbytes(size)
    out = bytearray(size)
    for i, table in enumerate(_TABLES):
        out[i::3] = raw[i::3].translate(table)
    return bytes(out)
