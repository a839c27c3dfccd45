"""What the fork and pickling tests' pool workers run (importable by
name, so that the 'spawn' start method finds it too)."""
import uniheap


class Counter(uniheap.PObject, name="t.fork.Counter"):
    n = uniheap.i64()
    label = uniheap.string()


def bump(c):
    """In a worker: add 1 to c.n in a block; c back (pickled again), and a
    new object made here, and this process's session."""
    heap = c.heap
    with heap.atomic():
        c.n += 1
    made = Counter(heap, n=c.n * 10, label=f"made by {c.label}")
    return c, made, heap.info()["session"]
