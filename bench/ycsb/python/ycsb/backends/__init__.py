"""The database bindings, by the name -db gives them (or module:Class)."""
import importlib

from ..db import DBError

BACKENDS = {
    "uniheap": "ycsb.backends.uniheap_db:UniheapDB",
    "lmdb": "ycsb.backends.lmdb_db:LmdbDB",
    "memory": "ycsb.backends.memory_db:MemoryDB",
    "redis": "ycsb.backends.redis_db:RedisDB",
}


def db_class(name):
    """The DB class -db names; DBError naming the choices if none."""
    target = BACKENDS.get(name, name)
    module, colon, cls = target.partition(":")
    if not colon:
        raise DBError(f"unknown db {name!r}: one of {', '.join(BACKENDS)}, or module:Class")
    try:
        return getattr(importlib.import_module(module), cls)
    except (ImportError, AttributeError) as e:
        raise DBError(f"db {name!r}: cannot load {target}: {e}") from None


def make_db(props):
    return db_class(props.get("db", "uniheap"))(props)
