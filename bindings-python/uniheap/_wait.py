"""Waiting for changes: the asyncio form (Heap.changed) and the watch
iterator (Heap.watch), thin layers over the C core's Heap.wait and Waiter
(src/wait.c), where the waiting itself is done.

changed() runs one native wait in a daemon thread (the GIL is released
while it sleeps) and resolves an asyncio future from it, so the event loop
keeps running. Cancelling the task cancels the native wait
(uh_wait_cancel); the task ends only once the wait has returned its
session to the heap's pool. A daemon thread, not an executor: a wait left
running never holds up the interpreter's exit."""
import asyncio
import threading

from ._uniheap import HeapClosedError, Waiter


def _settle(fut, ok, value):
    if fut.done():
        return
    if ok:
        fut.set_result(value)
    else:
        fut.set_exception(value)


async def changed(heap, obj, since=None, timeout=None):
    """Heap.changed: await heap.wait(obj, since, timeout) without blocking
    the event loop."""
    loop = asyncio.get_running_loop()
    fut = loop.create_future()
    waiter = Waiter(heap)
    returned = threading.Event()

    def run():
        try:
            ok, value = True, waiter.wait(obj, since, timeout)
        except BaseException as e:  # handed to the awaiting task
            ok, value = False, e
        returned.set()
        try:
            loop.call_soon_threadsafe(_settle, fut, ok, value)
        except RuntimeError:
            pass    # the loop is closed: nobody awaits it any more

    threading.Thread(target=run, name="uniheap-wait", daemon=True).start()
    try:
        return await fut
    except asyncio.CancelledError:
        # A cancel just before the native wait began is missed by it:
        # repeat it until the wait is over.
        while waiter.cancel() or not returned.is_set():
            try:
                await asyncio.sleep(0.001)
            except asyncio.CancelledError:
                pass
        raise


class Watch:
    """Heap.watch(obj): iterates (for, async for) over obj's new token
    after each change, from the token it had when watch() was called.
    Ends when the heap is closed."""
    __slots__ = ("_heap", "_obj", "_since")

    def __init__(self, heap, obj):
        self._heap = heap
        self._obj = obj
        many = isinstance(obj, (list, tuple))
        self._since = [heap.token(o) for o in obj] if many else heap.token(obj)

    def __iter__(self):
        return self

    def __next__(self):
        try:
            self._since = self._heap.wait(self._obj, self._since)
        except HeapClosedError:
            raise StopIteration from None
        return self._since

    def __aiter__(self):
        return self

    async def __anext__(self):
        try:
            self._since = await changed(self._heap, self._obj, self._since)
        except HeapClosedError:
            raise StopAsyncIteration from None
        return self._since
