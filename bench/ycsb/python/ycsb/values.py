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
# per-position distributions, drawn from one random integer of 8 * size
# bits per value: its bytes ANDed with the masks, then 32 added to each
# (no carry: 95 + 32 < 256), as whole integers rather than byte by byte.
_PATTERN = bytes((31, 63, 95))


@functools.lru_cache(maxsize=64)
def _masks(size):
    """(mask, add, bits) of a value of size bytes: the masks of its
    positions and the 32s to add, as little-endian integers."""
    mask = int.from_bytes((_PATTERN * (size // 3 + 1))[:size], "little")
    add = int.from_bytes(b" " * size, "little")
    return mask, add, 8 * size


def random_value(rng, size):
    """size random printable bytes (codes 32..127), as YCSB draws them."""
    mask, add, bits = _masks(size)
    return ((rng.getrandbits(bits) & mask) + add).to_bytes(size, "little")


def value_drawer(rng, size):
    """A function of no arguments returning random_value(rng, size)."""
    mask, add, bits = _masks(size)
    draw = rng.getrandbits

    def value():
        return ((draw(bits) & mask) + add).to_bytes(size, "little")
    return value


def random_values(rng, names, size):
    """{name: random_value(rng, size)} for each of names, in order."""
    mask, add, bits = _masks(size)
    draw = rng.getrandbits
    return {f: ((draw(bits) & mask) + add).to_bytes(size, "little") for f in names}
