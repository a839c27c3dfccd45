/*
 * session.c -- the rules of a Heap's session that every object of the
 * heap obeys: when the heap can be used (open, opened by this process,
 * no block of another thread open) and when its session ends (at close,
 * or, while zero-copy views are exported, when the last one is released,
 * view.c). Below the types that hold a Heap (proxies, views, blocks) and
 * the Heap type itself (heap.c); calls only errors.c.
 */
#include "ext.h"

/* 0 if the heap can be used; else an exception is set. */
int uhpy_heap_usable(HeapObject *hp)
{
	if (!hp->h) {
		uhpy_closed();
		return -1;
	}
	if (hp->epoch != uhpy_fork_epoch) {
		PyErr_SetString(uhpy_st->by_code[-UH_EFORK],
				"this heap was opened by the parent process before fork(): "
				"start the child with exec (e.g. multiprocessing's spawn) and connect there");
		return -1;
	}
	/* A session runs one block at a time: another thread's writes would
	 * silently join it. */
	if (hp->block_thread && hp->block_thread != PyThread_get_thread_ident()) {
		PyErr_SetString(uhpy_st->error, "this heap has a block open in another thread: "
				"use one Heap (connect()) per thread");
		return -1;
	}
	return 0;
}

static void end_session(HeapObject *hp, uh_heap *h)
{
	/* A forked child must not talk to its parent's heapd session. */
	if (h && hp->epoch == uhpy_fork_epoch) {
		Py_BEGIN_ALLOW_THREADS
		uh_disconnect(h);
		Py_END_ALLOW_THREADS
	}
}

void uhpy_heap_disconnect(HeapObject *hp)
{
	uh_heap *h = hp->h;

	hp->h = NULL;
	hp->base = NULL;
	hp->block_thread = 0;
	/* Zero-copy views read the mapping: it (and so the session that
	 * maps it) stays until the last one is released. */
	if (h && hp->exports > 0) {
		hp->parked = h;
		return;
	}
	end_session(hp, h);
}

void uhpy_heap_export_end(HeapObject *hp)
{
	if (--hp->exports == 0 && hp->parked) {
		uh_heap *h = hp->parked;
		hp->parked = NULL;
		end_session(hp, h);
	}
}
