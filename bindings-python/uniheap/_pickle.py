"""Pickling proxies: what a pickled proxy is, and how a process gets one back.

A pickled proxy is a reference, never a copy: heapd's socket path (made
absolute), the heap file's path, and the object's reference (its offset and
generation, ``proxy.offset``). Unpickled in any process, it is a proxy of the
same object on a Heap of that process connected to that socket: the first
open writable one (else the first open read-only one), else one that
unpickling connects and keeps open for the rest of the process. In a child
forked from a connected process the Heaps it inherited count: each attaches
anew (a session of the child's own) on its first use there, so
``multiprocessing`` with the ``fork`` start method, and ``spawn`` alike, pass
proxies to workers and back. The proxy made there pins its object in that
process's session, like every proxy.

Unpickling fails with uniheap.Error when heapd at that socket serves another
heap file, and with FreedObjectError when the object has been freed since
(pickling a proxy of a freed object fails too).
"""
import os
import threading
import weakref

from ._uniheap import Error, default_socket

_heaps = weakref.WeakSet()  # every Heap of this process (and those it inherited)
_own = {}                   # socket -> the Heap unpickling connected
_lock = threading.Lock()


def _new_lock():
    global _lock
    _lock = threading.Lock()  # a parent thread may have held it at the fork


os.register_at_fork(after_in_child=_new_lock)


def opened(heap, socket):
    """Note a Heap just connected to socket (None: the default socket)."""
    path = default_socket() if socket is None else os.fsdecode(socket)
    heap._socket = os.path.abspath(path)
    heap._heap_file = heap.info()["path"]
    _heaps.add(heap)


def reduce(heap, ref):
    """Proxy.__reduce__ of the object at ref on heap."""
    return (unpickle, (heap._socket, heap._heap_file, ref))


def unpickle(socket, heap_file, ref):
    """A proxy of the object at ref, on a Heap of this process (see above)."""
    return heap_for(socket, heap_file).proxy(ref)


def heap_for(socket, heap_file):
    """The Heap of this process that unpickling uses for socket."""
    with _lock:
        heap = None
        for h in list(_heaps):
            if h.closed or getattr(h, "_socket", None) != socket:
                continue
            if not h.readonly:
                heap = h
                break
            heap = heap or h
        if heap is None:
            heap = _own.get(socket)
            if heap is None or heap.closed:
                from ._heap import connect
                heap = connect(socket)
                _own[socket] = heap
    if heap._heap_file != heap_file:
        raise Error(f"a pickled proxy names an object of the heap file {heap_file}, but heapd "
                    f"at {socket} serves {heap._heap_file}")
    return heap
