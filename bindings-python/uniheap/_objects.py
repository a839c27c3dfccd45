"""Persistent classes: PObject, its metaclass, and generic proxies."""
from ._uniheap import Error, Field, Proxy
from ._uniheap import Heap as _Heap

#: the type codes of inline string and bytes fields (FORMAT.md 3.2)
_INLINE_CODES = (11, 12)

#: heap class name -> the class this process declared under it
_declared = {}


def at(p):
    """The byte offset of a proxy's object, for messages: a reference's
    bits 0..47 (bits 48..63 are its generation)."""
    return p.offset & 0xFFFF_FFFF_FFFF


def check_heap(heap, what):
    """TypeError unless heap is a uniheap.Heap."""
    if not isinstance(heap, _Heap):
        raise TypeError(f"{what}(heap, ...): the first argument must be a uniheap.Heap "
                        f"(from uniheap.connect()), not {type(heap).__name__}")


class PObjectMeta(type):
    """Lays out a persistent class: collects its Field declarations
    (inherited ones first) and gives it empty __slots__, so a proxy holds
    nothing but its reference."""

    def __new__(mcls, clsname, bases, ns, name=None, _generic=False, **kw):
        ns.setdefault("__slots__", ())
        cls = super().__new__(mcls, clsname, bases, ns, **kw)
        inherited = []
        for base in bases:
            inherited.extend(getattr(base, "__uniheap_fields__", ()))
        own = [v for v in ns.values() if isinstance(v, Field)]
        names = [f.name for f in inherited]
        for f in own:
            if f.name in names:
                raise TypeError(f"{clsname}: field {f.name!r} is declared twice")
            names.append(f.name)
        base = bases == (Proxy,)           # PObject itself
        if not base:
            if name is None:
                raise TypeError(f"class {clsname}: give its language-neutral heap name, "
                                f"e.g. class {clsname}(uniheap.PObject, name=\"app.{clsname}\")")
            if not isinstance(name, str) or not name:
                raise TypeError(f"class {clsname}: name= must be a non-empty str, not {name!r}")
        cls.__uniheap_fields__ = tuple(inherited + own)
        cls.__uniheap_generic__ = _generic
        cls.__uniheap_name__ = name
        for i, f in enumerate(cls.__uniheap_fields__):
            f._bind(i, -1, name or clsname)
        if not _generic and not base:
            _declared[name] = cls
        return cls

    def __call__(cls, heap, /, **values):
        """cls(heap, field=value, ...): a new object, initialized atomically."""
        if cls is PObject:
            raise TypeError("PObject is abstract: declare a subclass with fields")
        check_heap(heap, cls.__uniheap_name__)
        fields = {f.name for f in cls.__uniheap_fields__}
        for k in values:
            if k not in fields:
                raise TypeError(f"{cls.__uniheap_name__} has no field {k!r}")
        cid = heap._class_id(cls)
        if not values:
            return heap._alloc(cid)
        with heap.atomic():
            obj = heap._alloc(cid)
            for k, v in values.items():
                setattr(obj, k, v)
        return obj


class PObject(Proxy, metaclass=PObjectMeta):
    """Base of persistent classes.

        class Account(uniheap.PObject, name="bank.Account"):
            balance = uniheap.i64()

    name= (required) is the language-neutral class name in the heap.
    Account(heap, balance=10) allocates an object.
    """

    def __repr__(self):
        cls = type(self)
        try:
            self._check()
        except Error as e:
            return f"<{cls.__uniheap_name__} at offset {at(self)} ({type(e).__name__})>"
        parts = []
        for f in cls.__uniheap_fields__:
            v = f.__get__(self, cls)
            if isinstance(v, Proxy):
                parts.append(f"{f.name}=<{v.class_name} at offset {at(v)}>")
            else:
                parts.append(f"{f.name}={v!r}")
        return f"<{cls.__uniheap_name__} at offset {at(self)}: {', '.join(parts)}>"


def generic_class(info):
    """A proxy class built from a class-table entry (id, name, kind,
    payload, fields): attribute access by the heap's field names."""
    _cid, name, _kind, _payload, fields = info
    ns = {}
    descs = []
    for fname, ftype, _off, ref in fields:
        # an inline field's fourth word is its capacity (Heap._class_info)
        f = Field(ftype, max=ref) if ftype in _INLINE_CODES else Field(ftype)
        ns[fname] = f
        descs.append(f)
    short = name.rsplit(".", 1)[-1] or "Generic"
    cls = PObjectMeta(short, (PObject,), ns, name=name, _generic=True)
    cls.__qualname__ = short
    cls.__module__ = "uniheap.generic"
    for i, (f, (_fname, _ftype, off, _ref)) in enumerate(zip(descs, fields)):
        f._bind(i, off, name)
    return cls
