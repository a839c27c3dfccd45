"""Field declarations of persistent classes (class attributes).

    class Account(uniheap.PObject, name="bank.Account"):
        balance = uniheap.i64()
        owner = uniheap.string()
        next = uniheap.ref("bank.Account")
        note = uniheap.bytes_(max=100)      # inline: kept inside the object

string(max=N) and bytes_(max=N) declare inline fields (FORMAT.md 3.2): the
value lives in its object, up to N bytes (a longer one is refused with
ValueError naming field, capacity and length), so a record of such fields
is one object, created with one allocation and read with one copy.
"""
from ._uniheap import Field

__all__ = ["i8", "i16", "i32", "i64", "f32", "f64", "bool_", "string", "bytes_", "ref"]


def i8():
    """Signed 8-bit integer field."""
    return Field("i8")


def i16():
    """Signed 16-bit integer field."""
    return Field("i16")


def i32():
    """Signed 32-bit integer field."""
    return Field("i32")


def i64():
    """Signed 64-bit integer field."""
    return Field("i64")


def f32():
    """32-bit float field (values are rounded to float32)."""
    return Field("f32")


def f64():
    """64-bit float field."""
    return Field("f64")


def bool_():
    """Boolean field."""
    return Field("bool")


def string(max=None):
    """Immutable persistent string (str), or None; with max=N an inline
    string of at most N UTF-8 bytes, "" when new (never None)."""
    return Field("string", max=max)


def bytes_(max=None):
    """Immutable persistent bytes, or None; with max=N inline bytes of at
    most N bytes, b"" when new (never None)."""
    return Field("bytes", max=max)


def ref(target=None):
    """Reference to a persistent object, or None.

    target: None (any object), a PObject subclass, the heap name of a
    class (a str; may be declared only by another process or language),
    or one of PMap, PSortedMap, PList, PArray.
    """
    if target is not None and not isinstance(target, (str, type)):
        raise TypeError(f"ref() target must be a class, a class name or None, not "
                        f"{type(target).__name__}")
    return Field("ref", target)
