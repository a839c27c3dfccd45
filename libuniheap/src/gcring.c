/*
 * gcring.c -- the client's side of the online collector's write barrier
 * (FORMAT.md 9.3, common/gcfile.h): busy sections and grey references.
 *
 * A busy section brackets every store in place that may remove a
 * reference from a live object: a commit's apply (from the validation of
 * its reads on, tx.c, so that what it stores is still in the heap when
 * its section loads the state), a single field write, an allocation
 * outside a block. heapd's mark begins only once every
 * session is either out of a section or has seen the MARK state in it
 * (handshake H1), so after H1 every store in place is preceded by a push
 * of the bytes it overwrites (snapshot at the beginning: whatever was
 * reachable when the mark began is marked). The section costs one store
 * and one full fence; the pushes happen only while the state is MARK.
 * uh_gc_enter and uh_gc_leave are inline (uhint.h): every commit and
 * every single write opens a section; this file has their rare parts.
 *
 * Invariants: `busy` is set with a full fence before gc_state is loaded,
 * and cleared with release after the section's last store (heapd reads
 * busy == 0 as "no store in place of this session is in flight").
 * Sections nest (h->gc.busy_depth): only the outermost one stores busy
 * and loads the state; inner ones return the state `seen` keeps. A ring
 * entry is written before `head` moves past it (release), and the entry
 * at `head` is only reused once heapd's `tail` has passed it. A push that
 * finds the ring full waits a bounded time for heapd, then drops the
 * reference and sets `overflow`: the cycle is then given up, never wrong.
 * `overflow` stays set for the rest of the cycle it was set in (later
 * pushes drop at once); the first busy section that sees a later cycle's
 * MARK clears it.
 * A word an apply or a single write overwrites is pushed only if the
 * store changes it: an unchanged word removes no reference.
 * A reference is pushed at most once per cycle as far as h->gc.known
 * remembers (a push already in the ring is marked before the sweep, H2).
 * The table belongs to one cycle: a push for another cycle empties it
 * first. An object allocated once the mark of cycle c has begun (the GC
 * file's mark_begun = c: heapd's first handshake is over) goes into the
 * table too (uh_gc_note_new): cycle c keeps it without marking it (its
 * version is above gc_v0) and it lies on no path that existed when the
 * mark began (FORMAT.md 9.3, objects made during the mark); its pin, the
 * overwrite of a reference to it and its exit from the nursery then
 * push nothing. Seeing MARK is not enough: before H1 is over another
 * session may still remove a reference without a push, leaving an
 * object reachable only through one made meanwhile.
 * Without a GC file (h->gc.sess NULL) everything here is a no-op and the
 * state is IDLE.
 * The time a client waits for the collector (a full ring here, a pin on
 * an object the sweep holds in pins.c) is added up in h->st: the clock
 * is read only once a wait has begun, never on the way through.
 */
#include <sched.h>
#include <string.h>
#include <time.h>

#include "uhint.h"

#define RING_WAIT_NS 100000000ll	/* a full ring: wait this long for heapd */

void uh_gc_new_cycle(uh_heap *h, uint64_t state)
{
	struct uh_gc_sess *s = h->gc.sess;

	/* An overflow of an earlier cycle says nothing of this one (nothing
	 * was pushed for it yet). */
	h->gc.cycle_seen = uh_gc_cycle(state);
	h->st.gc_cycles++;
	if (__atomic_load_n(&s->overflow, __ATOMIC_RELAXED))
		__atomic_store_n(&s->overflow, 0, __ATOMIC_RELEASE);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

int64_t uh_gc_wait_begin(void)
{
	return now_ns();
}

void uh_gc_wait_end(uh_heap *h, int64_t t0)
{
	uint64_t ns = (uint64_t)(now_ns() - t0);

	h->st.gc_wait_ns += ns;
	if (ns > h->st.gc_wait_max_ns)
		h->st.gc_wait_max_ns = ns;
}

/* Room for one more entry: at once, or after heapd drained some within
 * RING_WAIT_NS (yielding the CPU to it meanwhile); 0 when none came. */
static int ring_room(uh_heap *h, struct uh_gc_sess *s, uint64_t head)
{
	if (head - __atomic_load_n(&s->tail, __ATOMIC_ACQUIRE) < UH_GC_RING_CAP)
		return 1;
	if (s->overflow)	/* this cycle is given up already: no second wait */
		return 0;
	h->st.gc_busy_waits++;
	int64_t t0 = uh_gc_wait_begin(), deadline = t0 + RING_WAIT_NS;
	int room = 0;
	do {	/* bound: RING_WAIT_NS */
		sched_yield();
		room = head - __atomic_load_n(&s->tail, __ATOMIC_ACQUIRE) < UH_GC_RING_CAP;
	} while (!room && now_ns() < deadline);
	uh_gc_wait_end(h, t0);
	return room;
}

/* The slot of word in the known table of cycle c (emptied first if it
 * held another cycle's). */
static uint64_t *known_slot(struct uh_gc_known *k, uint64_t cycle, uint64_t word)
{
	if (k->cycle != cycle) {
		memset(k->v, 0, sizeof(k->v));
		k->cycle = cycle;
	}
	uint64_t hash = (word >> 3) * 0x9e3779b97f4a7c15ull;
	return &k->v[hash >> 54];	/* top 10 bits: UH_GC_KNOWN slots */
}
_Static_assert(UH_GC_KNOWN == 1u << 10, "known_slot's hash width");

void uh_gc_note_new(uh_heap *h, uint64_t marking, uint64_t ref)
{
	struct uh_gc_known *k = &h->gc.known;

	/* A table of a later cycle is kept: this note would only empty it
	 * (marking was loaded before the allocation, and may be stale). */
	if (!marking || k->cycle > marking)
		return;
	*known_slot(k, marking, ref) = ref;
}

void uh_gc_grey(uh_heap *h, uint64_t word)
{
	struct uh_gc_sess *s = h->gc.sess;
	uint64_t off = UH_REF_OFFSET(word);

	/* Only what may be a reference: heapd checks the rest. */
	if (!s || off < UH_HDR_SIZE || (off & 7) || off >= h->size)
		return;
	/* The cycle of the busy section this push is in (its outermost
	 * section stored it in seen): pushed already in it? */
	uint64_t *known = known_slot(&h->gc.known, uh_gc_cycle(s->seen), word);
	if (*known == word) {
		h->st.gc_greys_skipped++;
		return;
	}
	uint64_t head = s->head;	/* only this session writes it */
	if (!ring_room(h, s, head)) {
		__atomic_store_n(&s->overflow, 1, __ATOMIC_RELEASE);
		return;
	}
	__atomic_store_n(&h->gc.ring[head % UH_GC_RING_CAP], word, __ATOMIC_RELAXED);
	__atomic_store_n(&s->head, head + 1, __ATOMIC_RELEASE);
	*known = word;
	h->st.gc_greys++;
}

void uh_gc_grey_range(uh_heap *h, const void *p, uint64_t len)
{
	uintptr_t a = ((uintptr_t)p + 7) & ~(uintptr_t)7;
	uintptr_t end = (uintptr_t)p + len;

	if (!h->gc.sess)
		return;
	for (; a + 8 <= end; a += 8)	/* bound: len / 8 */
		uh_gc_grey(h, __atomic_load_n((const uint64_t *)a, __ATOMIC_RELAXED));
}

void uh_gc_overwrite(void *ctx, const void *dst, const void *src, size_t len)
{
	uh_heap *h = ctx;
	uintptr_t d = (uintptr_t)dst;

	if (!src || (d & 7) || (len & 7)) {
		/* Freed bytes, or a store that covers part of a word: every
		 * word it touches, whole (an aligned store is the common one). */
		uintptr_t a = d & ~(uintptr_t)7;
		uh_gc_grey_range(h, (const void *)a, (d + len + 7 - a) & ~(uintptr_t)7);
		return;
	}
	/* Whole words: only those the store changes lose what they held (a
	 * node's image rewrites all its slots and changes few). */
	const uint64_t *old = dst;
	const unsigned char *s = src;
	for (size_t i = 0; i < len / 8; i++) {	/* bound: len / 8 */
		uint64_t o = __atomic_load_n(&old[i], __ATOMIC_RELAXED), n;
		memcpy(&n, s + 8 * i, 8);
		if (o != n)
			uh_gc_grey(h, o);
	}
}
