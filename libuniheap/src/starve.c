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
 * UH_STARVE_US, a claim's length).
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

void uh_starve_wait_lost_on(uh_heap *h)
{
	uint64_t obj = h->tx.lost_on;
	if (!obj || obj + sizeof(struct uh_objhdr) > h->size)
		return;
	const struct uh_objhdr *o = (const void *)(h->base + obj);
	uint64_t start = mono_us();
	for (;;) {	/* bound: UH_STARVE_US */
		uint64_t w = __atomic_load_n(&o->lock, __ATOMIC_ACQUIRE);
		if (!uh_lock_is_locked(w) || uh_lock_owner(w) == h->session ||
		    mono_us() - start >= UH_STARVE_US)
			return;
		sched_yield();
	}
}
