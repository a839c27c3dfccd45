/*
 * session.c -- the rules of a Heap's session that every object of the
 * heap obeys: when the heap can be used (open, opened by this process,
 * no block of another thread open) and when its session ends (at close,
 * or, while zero-copy views are exported, when the last one is released,
 * view.c). Below the types that hold a Heap (proxies, views, blocks) and
 * the Heap type itself (heap.c); calls only errors.c.
 *
 * fork(): a Heap a forked child inherited attaches anew on its first use
 * there (uhpy_heap_adopt, libuniheap's uh_fork_attach): a new session of
 * its own over the inherited mapping, so the parent's proxies stay valid
 * in the child; the parent's session goes on in the parent.
 */
#include "ext.h"

int uhpy_heap_adopt(HeapObject *hp)
{
	uh_heap *h = hp->h;
	int rc;

	Py_BEGIN_ALLOW_THREADS
	rc = uh_fork_attach(h);
	Py_END_ALLOW_THREADS
	if (rc) {
		uhpy_raise(rc, "attach in a forked child");
		return -1;
	}
	if (hp->h != h || hp->epoch == uhpy_fork_epoch)
		return 0;	/* another thread did the rest meanwhile */
	hp->conn++;	/* pins taken before are the parent's session's */
	hp->epoch = uhpy_fork_epoch;
	/* A block of another thread of the parent: that thread is not here,
	 * and nothing would ever end its block. The forking thread's own
	 * block stays open, doomed: its atomic() ends it with ForkedError. */
	if (hp->block_thread && hp->block_thread != PyThread_get_thread_ident()) {
		uh_abort(h);
		hp->block_thread = 0;
		hp->rollback_only = 0;
	}
	return 0;
}

/* 0 if the heap can be used; else an exception is set. */
int uhpy_heap_usable(HeapObject *hp)
{
	if (!hp->h) {
		uhpy_closed();
		return -1;
	}
	if (hp->epoch != uhpy_fork_epoch && uhpy_heap_adopt(hp) < 0)
		return -1;
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
	(void)hp;
	/* In a forked child, a heap never used there is still its parent's
	 * session: libuniheap then frees only this process's memory. */
	if (h) {
		Py_BEGIN_ALLOW_THREADS
		uh_disconnect(h);
		Py_END_ALLOW_THREADS
	}
}

/* A heap may grow while it is connected (FORMAT.md 1.1): direct reads
 * trust hp->size, brought up here to what libuniheap has mapped since. */
void uhpy_heap_mapped(HeapObject *hp)
{
	uh_info info;

	if (hp->h && uh_heap_info(hp->h, &info) == 0 && info.heap_size > hp->size)
		hp->size = info.heap_size;
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
