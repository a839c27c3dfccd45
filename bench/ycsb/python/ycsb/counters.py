"""The key counters the client threads share.

In the Java client, all threads share one CoreWorkload, hence one load key
sequence (CounterGenerator) and one insert key sequence for the run phase
(AcknowledgedCounterGenerator: a key becomes readable only once every
smaller key was inserted). The Python port runs its threads as processes,
so the shared versions keep their state in shared memory created by the
parent before it spawns the workers; with one thread the local versions
avoid the locks.
"""
import multiprocessing as mp

# As YCSB: at most 2^20 insert keys handed out but not yet acknowledged.
WINDOW_SIZE = 1 << 20
_WINDOW_MASK = WINDOW_SIZE - 1


class Counter:
    """start, start+1, ... (one process)."""

    def __init__(self, start):
        self._next = start

    def next_value(self):
        v = self._next
        self._next = v + 1
        return v

    def last_value(self):
        return self._next - 1


class AcknowledgedCounter(Counter):
    """A counter whose last_value() is the highest value below which every
    value was acknowledged (one process)."""

    def __init__(self, start):
        super().__init__(start)
        self._limit = start - 1
        self._acked = set()

    def last_value(self):
        return self._limit

    def acknowledge(self, value):
        if len(self._acked) >= WINDOW_SIZE:
            raise RuntimeError("too many unacknowledged insertion keys")
        self._acked.add(value)
        while self._limit + 1 in self._acked:
            self._limit += 1
            self._acked.discard(self._limit)


class SharedCounter:
    """Counter over shared memory: every worker process draws from it."""

    def __init__(self, start, ctx=None):
        ctx = ctx or mp.get_context("spawn")
        self._value = ctx.Value("q", start)

    def next_value(self):
        with self._value.get_lock():
            v = self._value.value
            self._value.value = v + 1
        return v

    def last_value(self):
        return self._value.value - 1


class SharedAcknowledgedCounter(SharedCounter):
    """AcknowledgedCounter over shared memory. Like YCSB's, acknowledge()
    marks its slot in a window and advances the limit only if it gets the
    lock at once; a slot a concurrent advance missed is picked up by the
    next acknowledge."""

    def __init__(self, start, ctx=None):
        ctx = ctx or mp.get_context("spawn")
        super().__init__(start, ctx)
        self._limit = ctx.RawValue("q", start - 1)
        self._window = ctx.RawArray("b", WINDOW_SIZE)
        self._lock = ctx.Lock()

    def last_value(self):
        return self._limit.value

    def acknowledge(self, value):
        slot = value & _WINDOW_MASK
        if self._window[slot]:
            raise RuntimeError("too many unacknowledged insertion keys")
        self._window[slot] = 1
        if not self._lock.acquire(block=False):
            return
        try:
            index = self._limit.value + 1
            for _ in range(WINDOW_SIZE):    # round the window at most once
                s = index & _WINDOW_MASK
                if not self._window[s]:
                    break
                self._window[s] = 0
                index += 1
            self._limit.value = index - 1
        finally:
            self._lock.release()
