/*
 * starve.c -- a block that keeps losing goes first (FORMAT.md 8.6, the GC
 * file's `starving` word).
 *
 * Time-based STM lets short blocks starve a long one: a block that reads a
 * shared object (a map's bucket, its count) and writes it later loses to
 * every commit that touches the object in between, and a Python or Node
 * block, slower than a C writer's, can lose every one of uh_run's tries
 * while two C processes commit to the same map (seen: 100 lost tries in a
 * row). So a block that has lost UH_STARVE_TRIES times claims the heap-
 * wide word: its session slot and a deadline UH_STARVE_US ahead, renewed
 * at each of its retries. Every other session's outermost uh_begin waits
 * while the word names another session and its deadline has not passed
 * (a renewal extends the wait, up to UH_STARVE_WAIT_MAX_US in all);
 * blocks already running finish, the starving block retries without
 * backoff and, with nobody else starting, commits; its commit (or
 * uh_run giving up) clears the word. Without backoff, but not at once
 * while the object it lost on is still locked by another session: a
 * block already running that holds it (descheduled, or paused by its
 * runtime) would otherwise see all the remaining tries lost within a
 * millisecond; the starving block waits for that lock first (bounded by
 * UH_STARVE_US, a claim's length). A holder may also be waiting in heapd
 * for a lease, which runs GC cycles for up to seconds while its block
 * keeps its locks: its session says so in its GC area (the `calling`
 * word, uh_starve_calling), and the starving block then waits for the
 * lock as long as that lasts (bounded by UH_STARVE_CALL_US), rather than
 * lose every remaining try to it.
 *
 * The word is advisory: it orders starts, never decides what commits
 * (validation does), so a wrong or torn value costs at most one wait of
 * UH_STARVE_WAIT_MAX_US. A session that dies holding it blocks nobody past
 * the deadline. When no block starves, uh_begin pays one load of a line that
 * nobody writes. Read-only handles neither claim nor wait.
 */
#include <sched.h>
#include <time.h>

#include "uhint.h"

#define UH_STARVE_TRIES 16u	/* lost tries before a block claims the word */
#define UH_STARVE_US 20000u	/* how long a claim makes others wait at most */
#define UH_STARVE_WAIT_MAX_US 100000u	/* one begin's wait, claims renewed or not */
#define UH_STARVE_CALL_US 15000000u	/* the wait for a lock held across a lease */
#define STARVE_SLOT_SHIFT 48
#define STARVE_TIME_MASK ((1ull << STARVE_SLOT_SHIFT) - 1)

static uint64_t mono_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static uint64_t *starving_word(uh_heap *h)
{
	if (!h->gc.file || h->readonly)
		return NULL;
	return (uint64_t *)&((struct uh_gc_filehdr *)h->gc.file)->starving;
}

int uh_starve_claim(uh_heap *h, unsigned tries)
{
	uint64_t *w = starving_word(h);
	if (!w || tries < UH_STARVE_TRIES)
		return 0;
	uint64_t now = mono_us(), mine = (uint64_t)h->session << STARVE_SLOT_SHIFT;
	uint64_t want = mine | ((now + UH_STARVE_US) & STARVE_TIME_MASK);
	uint64_t cur = __atomic_load_n(w, __ATOMIC_ACQUIRE);
	int free = cur == 0 || (cur >> STARVE_SLOT_SHIFT) == h->session ||
		   (cur & STARVE_TIME_MASK) <= (now & STARVE_TIME_MASK);
	if (!free || !__atomic_compare_exchange_n(w, &cur, want, 0, __ATOMIC_ACQ_REL,
						  __ATOMIC_ACQUIRE))
		return 0;	/* another block starves: it goes first */
	h->starving = 1;
	return 1;
}

void uh_starve_release(uh_heap *h)
{
	uint64_t *w = starving_word(h);
	if (!h->starving || !w)
		return;
	h->starving = 0;
	uint64_t cur = __atomic_load_n(w, __ATOMIC_ACQUIRE);
	if ((cur >> STARVE_SLOT_SHIFT) == h->session)
		__atomic_compare_exchange_n(w, &cur, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

void uh_starve_wait(uh_heap *h)
{
	uint64_t *w = starving_word(h);
	if (!w || !__atomic_load_n(w, __ATOMIC_ACQUIRE))
		return;
	uint64_t start = mono_us();
	for (;;) {	/* bound: UH_STARVE_WAIT_MAX_US, whatever the claims */
		uint64_t cur = __atomic_load_n(w, __ATOMIC_ACQUIRE);
		uint64_t now = mono_us(), deadline = cur & STARVE_TIME_MASK;
		uint64_t t = now & STARVE_TIME_MASK;
		if (!cur || (cur >> STARVE_SLOT_SHIFT) == h->session || t >= deadline ||
		    deadline - t > UH_STARVE_US || now - start >= UH_STARVE_WAIT_MAX_US)
			return;	/* released, ours, over, not a claim, or waited enough */
		sched_yield();
	}
}

void uh_starve_calling(uh_heap *h, int on)
{
	if (h->gc.sess)
		__atomic_store_n((uint64_t *)((char *)h->gc.sess + UH_GC_CALLING_OFF),
				 on ? mono_us() | 1u : 0, __ATOMIC_RELEASE);
}

/* Session s says it waits in heapd for a lease (uh_starve_calling). */
static int is_calling(uh_heap *h, uint32_t s)
{
	if (!h->gc.file || s == 0 || s >= h->gc.file->session_cap)
		return 0;
	const char *area = (const char *)h->gc.file + UH_GC_AREA_OFF(s);
	return __atomic_load_n((const uint64_t *)(area + UH_GC_CALLING_OFF), __ATOMIC_ACQUIRE) != 0;
}

void uh_starve_wait_lost_on(uh_heap *h)
{
	uint64_t obj = h->tx.lost_on;
	if (!obj || obj + sizeof(struct uh_objhdr) > h->size)
		return;
	const struct uh_objhdr *o = (const void *)(h->base + obj);
	uint64_t start = mono_us();
	for (;;) {	/* bound: UH_STARVE_US, or UH_STARVE_CALL_US for a holder in a lease */
		uint64_t w = __atomic_load_n(&o->lock, __ATOMIC_ACQUIRE);
		uint64_t waited = mono_us() - start;
		if (!uh_lock_is_locked(w) || uh_lock_owner(w) == h->session)
			return;
		if (waited < UH_STARVE_US) {
			sched_yield();
			continue;
		}
		if (waited >= UH_STARVE_CALL_US || !is_calling(h, uh_lock_owner(w)))
			return;
		/* The holder waits for space: sleep, not spin (its lease
		 * needs the CPU for GC), and answer heapd's ask for arenas
		 * after each cycle, as an allocation would. */
		uh_alloc_give_back(h, 0);
		struct timespec ts = { 0, 1000000L };
		nanosleep(&ts, NULL);
	}
}
