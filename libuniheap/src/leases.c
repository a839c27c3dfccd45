/*
 * leases.c -- the small arenas this session leases: which they are (the
 * directory says, FORMAT.md 6.1), which it keeps after a re-attach, and
 * which it gives back once a GC cycle has mostly emptied them, so that
 * their space serves the other sessions (FORMAT.md 6.3, "Giving arenas
 * back").
 *
 * Only the leasing session claims slots in an arena, so a partly empty
 * arena one session leases is no use to another, nor can heapd free it:
 * five writers that each keep the arenas they once filled hold the whole
 * heap while few of their objects live. Hence a session looks at its
 * arenas after each cycle whose sweep is over (seen at the next
 * allocation) and before each lease; when heapd has asked for space since
 * the last look (a lease or an attach found none: the GC file's
 * space_asked moved), it returns (ReturnArena) every small arena of its
 * own less than half full, except the one it allocates in for a slot size
 * it used since the last look. Each look then stores the cycle it looked
 * after in the session's GC area (UH_GC_LOOKED_OFF): a lease that found
 * no space waits for the other sessions' looks after its cycle, not for
 * a fixed time. Until the heap is full a session keeps what it leased:
 * a program that has room in its arenas allocates without calling heapd
 * (the crash campaigns freeze heapd and rely on it), also in a slot size
 * it left for a while; it gives back only when heapd, running, has just
 * asked. heapd leases a returned arena that has room to any session
 * asking for its slot size, and frees it once it holds no object (at the
 * end of a sweep that follows a lease which found no space, 6.3).
 *
 * Invariant: an arena leaves this session's lists before its ReturnArena
 * is sent, and is never put back (a call that failed may still have
 * reached heapd): no slot is claimed in an arena heapd no longer counts
 * as this session's. Objects in a returned arena are untouched: liveness
 * comes from roots and pins, never from leases; the block's own new
 * objects there stay locked and logged, and a rollback clears their bits
 * as any free does.
 */
#include <stdio.h>

#include "uhint.h"

#define GIVEBACK_PCT 50u	/* an arena less full than this goes back */

/* The directory entry (FORMAT.md 6.1) names arena_off, a small arena
 * leased to this session. The header's dir_index only says where to look:
 * a freed arena's header may still be there, but then the entry names
 * another offset or nothing. */
int uh_alloc_leased_here(uh_heap *h, uint64_t arena_off)
{
	if (arena_off > h->size - sizeof(struct uh_arena_hdr))
		return 0;
	const struct uh_arena_hdr *ah = (const void *)(h->base + arena_off);
	uint64_t idx = __atomic_load_n(&ah->dir_index, __ATOMIC_ACQUIRE);
	if (idx >= h->hdr->arena_cap)
		return 0;
	const struct uh_arena_ent *e =
		(const struct uh_arena_ent *)(h->base + h->hdr->arena_dir_off) + idx;
	return __atomic_load_n(&e->off, __ATOMIC_ACQUIRE) == arena_off &&
	       __atomic_load_n(&e->kind, __ATOMIC_ACQUIRE) == UH_ARENA_SMALL &&
	       __atomic_load_n(&e->owner, __ATOMIC_ACQUIRE) == h->session;
}

void uh_alloc_keep_leased(uh_heap *h)
{
	for (uint32_t i = 0; i < UH_SIZE_CLASSES; i++) {	/* bound: UH_SIZE_CLASSES */
		struct uh_size_arenas *sa = &h->small[i];
		uint32_t n = 0;
		for (uint32_t k = 0; k < sa->n; k++)	/* bound: arenas of the class */
			if (uh_alloc_leased_here(h, sa->v[k].arena_off))
				sa->v[n++] = sa->v[k];
		sa->n = n;
		sa->current = 0;
	}
}

static uint32_t used_slots(uh_heap *h, const struct uh_arena_ref *a)
{
	const uint64_t *bm = uh_arena_bitmap(h->base, a->arena_off);
	uint32_t n = 0;
	for (uint32_t w = 0; w < (a->nslots + 63) / 64; w++)	/* bound: bitmap words */
		n += (uint32_t)__builtin_popcountll(__atomic_load_n(&bm[w], __ATOMIC_RELAXED));
	return n;
}

/* Return the arena at off, already out of this session's lists. */
static void give_back(uh_heap *h, uint64_t off)
{
	char keep[1024];	/* a caller's message must survive */
	snprintf(keep, sizeof(keep), "%s", uh_errmsg());
	(void)uhc_return_arena(h->ctl, off);	/* heapd counts the returns */
	uh_err_set(0, "%s", keep);
}

/* Drop arena k of sa from this session's list (k then holds the last). */
static void drop(struct uh_size_arenas *sa, uint32_t k)
{
	sa->v[k] = sa->v[--sa->n];
	if (sa->current == sa->n)
		sa->current = k;
	if (sa->current >= sa->n)
		sa->current = 0;
}

/* The arena a slot size allocates in stays when the session allocated in
 * that size since the last look. */
static void review_class(uh_heap *h, struct uh_size_arenas *sa)
{
	for (uint32_t k = 0; k < sa->n;) {	/* bound: arenas of the class */
		const struct uh_arena_ref *r = &sa->v[k];
		uint64_t off = r->arena_off;
		int filling = k == sa->current && sa->used;
		if (!uh_alloc_leased_here(h, off)) {
			drop(sa, k);	/* not this session's (never expected) */
		} else if (!filling && used_slots(h, r) * 100u < r->nslots * GIVEBACK_PCT) {
			drop(sa, k);	/* first: never claimed in once returned */
			give_back(h, off);
		} else {
			k++;
		}
	}
}

/* heapd has asked for space since this session last answered (the GC
 * file's space_asked, common/gcfile.h); answered by this call. */
static int space_asked(uh_heap *h)
{
	if (!h->gc.file)
		return 0;	/* no GC file, no collector: nothing asks */
	uint64_t n = __atomic_load_n(&h->gc.file->space_asked, __ATOMIC_ACQUIRE);
	int asked = n != h->space_answered;
	h->space_answered = n;
	return asked;
}

int uh_alloc_swept_since_look(uh_heap *h)
{
	return uh_gc_swept_cycle(__atomic_load_n(&h->hdr->gc_state, __ATOMIC_ACQUIRE)) !=
	       h->arenas_reviewed;
}

/* Tell heapd this session has looked after cycle done (common/gcfile.h):
 * a lease that found no space waits for it rather than for a fixed time. */
static void say_looked(uh_heap *h, uint64_t done)
{
	if (h->gc.sess)
		__atomic_store_n((uint64_t *)((char *)h->gc.sess + UH_GC_LOOKED_OFF), done,
				 __ATOMIC_RELEASE);
}

void uh_alloc_give_back(uh_heap *h, int before_lease)
{
	uint64_t done = uh_gc_swept_cycle(__atomic_load_n(&h->hdr->gc_state, __ATOMIC_ACQUIRE));
	if (!before_lease && done == h->arenas_reviewed)
		return;
	h->arenas_reviewed = done;
	/* Not asked: the session keeps its arenas and calls nobody. heapd
	 * gone: the re-attach sorts the leases out. */
	int give = h->ctl && uhc_connected(h->ctl) && space_asked(h);
	for (uint32_t i = 0; i < UH_SIZE_CLASSES; i++) {	/* bound: UH_SIZE_CLASSES */
		if (give)
			review_class(h, &h->small[i]);
		h->small[i].used = 0;
	}
	say_looked(h, done);	/* after the returns: heapd counts them then */
}
