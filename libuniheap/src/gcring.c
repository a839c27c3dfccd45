/*
 * gcring.c -- the client's side of the online GC's write barrier
 * (FORMAT.md 9.3): busy sections and the session's ring of grey
 * references.
 *
 * Invariants: busy is 1 exactly while a section is open (sections nest:
 * busy_depth counts them); `seen` holds the gc_state loaded after busy
 * was raised and a full fence, so heapd's handshake, which waits for
 * busy == 0 or seen == its state, knows the section will push what the
 * state asks. A ring entry is stored before `head` moves past it
 * (release); heapd moves `tail`. Only the session's own thread pushes.
 */
#include <sched.h>
#include <time.h>

#include "uhint.h"

#define RING_WAIT_NS (100ull * 1000 * 1000)	/* a full ring waits this long */

uint64_t uh_gc_enter(uh_heap *h)
{
	struct uh_gc_sess *s = h->gc.sess;
	if (!s)
		return uh_gc_state_make(0, UH_GC_IDLE);
	if (h->gc.busy_depth++)
		return __atomic_load_n(&s->seen, __ATOMIC_RELAXED);
	__atomic_store_n(&s->busy, 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	uint64_t st = __atomic_load_n(&h->hdr->gc_state, __ATOMIC_SEQ_CST);
	__atomic_store_n(&s->seen, st, __ATOMIC_RELEASE);
	return st;
}

void uh_gc_leave(uh_heap *h)
{
	struct uh_gc_sess *s = h->gc.sess;
	if (!s || !h->gc.busy_depth || --h->gc.busy_depth)
		return;
	__atomic_store_n(&s->busy, 0, __ATOMIC_RELEASE);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Room for one more entry: wait (bounded) for heapd to consume. */
static int ring_room(uh_heap *h, uint64_t head)
{
	struct uh_gc_sess *s = h->gc.sess;
	if (head - __atomic_load_n(&s->tail, __ATOMIC_ACQUIRE) < UH_GC_RING_CAP)
		return 1;
	h->st.gc_busy_waits++;
	uint64_t t0 = mono_ns();
	while (mono_ns() - t0 < RING_WAIT_NS) {	/* bounded by time */
		sched_yield();
		if (head - __atomic_load_n(&s->tail, __ATOMIC_ACQUIRE) < UH_GC_RING_CAP)
			return 1;
	}
	return 0;
}

void uh_gc_grey(uh_heap *h, uint64_t word)
{
	struct uh_gc_sess *s = h->gc.sess;
	uint64_t off = UH_REF_OFFSET(word);
	if (!s || !off || (off & 7) || off >= h->size)
		return;
	uint64_t head = s->head;
	if (!ring_room(h, head)) {
		/* The cycle is given up, never wrong. */
		__atomic_store_n(&s->overflow, 1, __ATOMIC_RELEASE);
		return;
	}
	__atomic_store_n(&h->gc.ring[head % UH_GC_RING_CAP], word, __ATOMIC_RELAXED);
	__atomic_store_n(&s->head, head + 1, __ATOMIC_RELEASE);
	h->st.gc_greys++;
}

void uh_gc_grey_range(uh_heap *h, const void *p, uint64_t len)
{
	const char *c = p;
	uintptr_t a = ((uintptr_t)c + 7) & ~(uintptr_t)7;
	const char *end = c + len;
	for (; (const char *)a + 8 <= end; a += 8)	/* bounded by len */
		uh_gc_grey(h, __atomic_load_n((const uint64_t *)a, __ATOMIC_RELAXED));
}
