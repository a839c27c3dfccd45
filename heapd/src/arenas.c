/*
 * arenas.c -- leasing arenas (slabs of one slot size) and large-object
 * regions to sessions, and taking them back.
 *
 * An arena is a zeroed libpmemobj allocation, or, when the pool has no
 * room, zeroed chunks of a grown heap's extension (chunks.c): struct
 * uh_arena_hdr, then the slot bitmap, then slots from first_slot (64-byte
 * aligned). Its directory entry in the heap header says who leases it.
 * Allocation (or the chunks' bits), header and directory entry are made
 * in one libpmemobj transaction, so a crash leaves either a complete
 * arena with its entry or neither.
 *
 * An arena placed in an extension passes growth's crash points
 * (growcrash.c: UNIHEAP_GROW_CRASH_AT) after its header is persisted and
 * after its transaction commits.
 *
 * Zeroed matters: recovery GC treats any slot whose header has the valid
 * bit as an object, so an arena must never expose old pool contents.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core.h"

/* Largest n such that header, bitmap and n slots fit in bytes. Starts
 * from an upper bound and steps down; the bitmap and padding never exceed
 * 64 + bytes/256 bytes, so this takes at most that / slot_size + 1 steps. */
static uint32_t small_nslots(uint64_t bytes, uint32_t slot_size)
{
	uint64_t n = (bytes - sizeof(struct uh_arena_hdr)) / slot_size;
	while (n > 0 && uh_arena_first_slot_rel((uint32_t)n) + n * slot_size > bytes)
		n--;
	return (uint32_t)n;
}

static int slot_size_ok(uint32_t slot_size)
{
	for (uint32_t i = 0; i < UH_SIZE_CLASSES; i++) {
		if (uh_size_class_slot[i] == slot_size)
			return 1;
	}
	return 0;
}

const struct uh_arena_hdr *hd_arena_hdr_ok(struct hd *hd, uint32_t idx)
{
	if (idx >= hd->hdr->arena_cap)
		return NULL;
	const struct uh_arena_ent *e = &hd_arena_dir(hd)[idx];
	if (e->kind != UH_ARENA_SMALL && e->kind != UH_ARENA_LARGE)
		return NULL;
	/* Arenas are libpmemobj allocations (16-byte aligned); a damaged
	 * offset must not be read from with misaligned loads. */
	if (e->size < sizeof(struct uh_arena_hdr) || e->off % 16 || !hd_in_heap(hd, e->off, e->size))
		return NULL;
	const struct uh_arena_hdr *ah = (const struct uh_arena_hdr *)(hd->base + e->off);
	if (ah->magic != UH_ARENA_MAGIC || ah->dir_index != idx || ah->nslots == 0 ||
	    ah->slot_size != e->slot_size || ah->nslots != e->nslots ||
	    ah->slot_size < UH_OBJHDR_SIZE)
		return NULL;
	uint64_t rel = uh_arena_first_slot_rel(ah->nslots);
	if (ah->first_slot != e->off + rel ||
	    rel + (uint64_t)ah->nslots * ah->slot_size > e->size)
		return NULL;
	return ah;
}

/* In a heap that may grow, arenas leave a reserve of the pool for what
 * the pool holds first (session logs and their extents, which go to the
 * extension only once the pool has no room for them, logs.c; class
 * descriptors, which only the pool holds; libpmemobj's own overhead):
 * room for POOL_RESERVE_LOGS logs and HD_POOL_RESERVE_MORE bytes, but at
 * most three quarters of the pool (FORMAT.md 1.1). Half of a 16 MiB pool
 * was not enough for five 1 MiB logs; three quarters of a 256 MiB one
 * (the default size, which may grow by default) would keep 192 MiB from
 * arenas for nothing. */
#define POOL_RESERVE_LOGS 32u

uint64_t hd_pool_arena_bytes_locked(struct hd *hd)
{
	const struct uh_hdr *h = hd->hdr;
	const struct uh_arena_ent *dir = hd_arena_dir(hd);
	uint64_t ext = hd_ext_start(h), used = 0;
	for (uint32_t i = 0; i < h->arena_cap; i++)	/* bounded by arena_cap */
		if (dir[i].kind != UH_ARENA_UNUSED && dir[i].off < ext)
			used += dir[i].size + HD_PMEMOBJ_ALLOC_HDR;
	return used;
}

/* The small arena reserved ahead (hd->spare, under hd->mu). */
struct hd_spare {
	pthread_t thread;
	pthread_cond_t cv;
	int stop;
	int want;			/* a lease used it (or found none): reserve one */
	int have;
	struct pobj_action act;
	PMEMoid oid;
};

/* The bytes of a small arena's allocation (its libpmemobj header apart). */
static uint64_t small_arena_bytes(const struct hd *hd)
{
	return hd->hdr->arena_size - HD_PMEMOBJ_ALLOC_HDR;
}

static uint64_t spare_bytes(struct hd *hd)
{
	return hd->spare && hd->spare->have ? small_arena_bytes(hd) : 0;
}

static int pool_has_room(struct hd *hd, uint64_t bytes)
{
	const struct uh_hdr *h = hd->hdr;
	if (uh_hdr_max_size(h) <= h->heap_size)
		return 1;
	uint64_t used = hd_pool_arena_bytes_locked(hd) + bytes + spare_bytes(hd);
	uint64_t reserve = (uint64_t)POOL_RESERVE_LOGS * h->log_size + HD_POOL_RESERVE_MORE;
	if (reserve > h->heap_size / 4 * 3)
		reserve = h->heap_size / 4 * 3;
	return used <= h->heap_size - reserve;
}

uint64_t hd_arena_new_tx(struct hd *hd, uint32_t kind, uint32_t slot_size, uint32_t owner,
			 uint32_t *dir_index)
{
	struct uh_arena_ent *dir = hd_arena_dir(hd);
	uint32_t idx = 0;
	while (idx < hd->hdr->arena_cap && dir[idx].kind != UH_ARENA_UNUSED)
		idx++;	/* bounded by arena_cap */
	if (idx == hd->hdr->arena_cap)
		pmemobj_tx_abort(ENOSPC);	/* directory full; does not return */

	uint64_t bytes;
	uint32_t nslots;
	if (kind == UH_ARENA_SMALL) {
		bytes = small_arena_bytes(hd);
		nslots = small_nslots(bytes, slot_size);
	} else {
		nslots = 1;
		bytes = uh_arena_first_slot_rel(1) + slot_size;
	}
	/* The pool first; when it has no room, the extension of a grown
	 * heap (FORMAT.md 1.1), which aborts the transaction with ENOMEM
	 * when it has none either. */
	PMEMoid oid = OID_NULL;
	struct hd_spare *sp = hd->spare;
	if (kind == UH_ARENA_SMALL && sp && sp->have) {
		/* Reserved and zeroed ahead: published when this transaction
		 * commits, cancelled if it aborts. */
		sp->have = 0;
		sp->want = 1;
		if (pmemobj_tx_publish(&sp->act, 1) != 0)
			pmemobj_tx_abort(ENOMEM);	/* does not return */
		oid = sp->oid;
	}
	if (OID_IS_NULL(oid) && pool_has_room(hd, bytes))
		oid = pmemobj_tx_xalloc(bytes, HD_TYPE_ARENA,
					POBJ_XALLOC_ZERO | POBJ_XALLOC_NO_ABORT);
	int ext = OID_IS_NULL(oid);
	if (ext)
		oid.off = hd_chunks_alloc_tx(hd, bytes);
	struct uh_arena_hdr *ah = (struct uh_arena_hdr *)(hd->base + oid.off);
	/* New memory needs no undo copy, only a flush at commit; libpmemobj
	 * flushes no extension byte, so those are persisted below. */
	if (!ext)
		hd_tx_xadd(hd, ah, uh_arena_first_slot_rel(nslots), POBJ_XADD_NO_SNAPSHOT);
	ah->magic = UH_ARENA_MAGIC;
	ah->slot_size = slot_size;
	ah->nslots = nslots;
	ah->bitmap_words = (nslots + 63u) / 64u;
	ah->first_slot = oid.off + uh_arena_first_slot_rel(nslots);
	ah->dir_index = idx;
	/* The arena's slots start at the heap-wide seed, which every new
	 * arena advances: memory heapd freed (a large region) and handed out
	 * again never restarts a slot at a generation an old reference may
	 * still carry (FORMAT.md 6.3). */
	hd_tx_add(hd, &hd->hdr->gen_seed, sizeof(hd->hdr->gen_seed));
	ah->gen_seed = hd->hdr->gen_seed & UH_GEN_MASK;
	hd->hdr->gen_seed = (ah->gen_seed + 1) & UH_GEN_MASK;
	if (ext) {
		uh_persist_range(&hd->persist, ah, uh_arena_first_slot_rel(nslots));
		hd_grow_crash_point(hd, "ext_header");
	}

	hd_tx_add(hd, &dir[idx], sizeof(dir[idx]));
	dir[idx].off = oid.off;
	dir[idx].kind = kind;
	dir[idx].owner = owner;
	dir[idx].slot_size = slot_size;
	dir[idx].nslots = nslots;
	dir[idx].size = bytes;
	hd_tx_add(hd, &hd->hdr->arena_count, sizeof(hd->hdr->arena_count));
	hd->hdr->arena_count++;
	*dir_index = idx;
	return oid.off;
}

/* Bytes held by all arenas, for messages and status. */
uint64_t hd_arena_bytes_locked(struct hd *hd, uint32_t *count)
{
	const struct uh_arena_ent *dir = hd_arena_dir(hd);
	uint64_t sum = 0;
	uint32_t n = 0;
	for (uint32_t i = 0; i < hd->hdr->arena_cap; i++) {	/* bounded by arena_cap */
		if (dir[i].kind != UH_ARENA_UNUSED) {
			sum += dir[i].size;
			n++;
		}
	}
	if (count)
		*count = n;
	return sum;
}

/* "heap full: cannot lease a 1 MiB arena (heap 64 MiB, 63 MiB in arenas)".
 * Arenas are counted with libpmemobj's 16-byte header, i.e. what they
 * take from the pool, so whole arenas add up to whole MiB. */
static int heap_full(struct hd *hd, int tx_errno, const char *what, uint64_t bytes,
		     char *err, size_t errlen)
{
	char a[32], b[32], c[32];
	uint32_t n;
	uint64_t used = hd_arena_bytes_locked(hd, &n) + (uint64_t)n * HD_PMEMOBJ_ALLOC_HDR;
	if (tx_errno == ENOSPC)
		return hd_err(err, errlen, UH_ENOSPC,
			      "heap full: cannot lease a %s %s (arena directory full: %u entries)",
			      hd_fmt_bytes(a, sizeof(a), bytes), what, hd->hdr->arena_cap);
	return hd_err(err, errlen, UH_ENOSPC, "heap full: cannot lease a %s %s (heap %s, %s in arenas)",
		      hd_fmt_bytes(a, sizeof(a), bytes), what,
		      hd_fmt_bytes(b, sizeof(b), hd->heap_size), hd_fmt_bytes(c, sizeof(c), used));
}

/* Read-only sessions (no log area) never allocate, so never lease. */
static int check_writer(struct hd *hd, uint32_t session, char *err, size_t errlen)
{
	int rc = hd_session_active_locked(hd, session, err, errlen);
	if (!rc && hd_session_tab(hd)[session].log_off == 0)
		rc = hd_err(err, errlen, UH_EINVAL,
			    "session %u is read-only: it cannot lease arenas", session);
	return rc;
}

static void fill_out(struct hd *hd, uint64_t arena_off, struct hd_arena *out)
{
	const struct uh_arena_hdr *ah = (const struct uh_arena_hdr *)(hd->base + arena_off);
	out->arena_off = arena_off;
	out->slot_size = ah->slot_size;
	out->nslots = ah->nslots;
	out->first_slot = ah->first_slot;
}

static int has_free_slot(struct hd *hd, const struct uh_arena_hdr *ah, uint64_t arena_off)
{
	const uint64_t *bm = uh_arena_bitmap(hd->base, arena_off);
	for (uint32_t w = 0; w < ah->bitmap_words; w++) {	/* bounded by bitmap_words */
		uint64_t word = __atomic_load_n(&bm[w], __ATOMIC_ACQUIRE);
		uint32_t valid = ah->nslots - w * 64u;	/* slots this word covers */
		uint64_t mask = valid >= 64 ? ~0ull : ((1ull << valid) - 1);
		if ((word & mask) != mask)
			return 1;
	}
	return 0;
}

/* An unleased small arena of this slot size with room left, or -1. With
 * own, also one that session leases already: after a GC cycle freed
 * slots in the arenas of a session whose lease found no space, the
 * session gets one of its own back (it looks for room in the arenas it
 * is handed, and this is how it learns there is some again). */
static int64_t find_reusable(struct hd *hd, uint32_t slot_size, uint32_t own)
{
	const struct uh_arena_ent *dir = hd_arena_dir(hd);
	for (uint32_t i = 0; i < hd->hdr->arena_cap; i++) {	/* bounded by arena_cap */
		if (dir[i].kind != UH_ARENA_SMALL || (dir[i].owner != 0 && dir[i].owner != own) ||
		    dir[i].slot_size != slot_size)
			continue;
		const struct uh_arena_hdr *ah = hd_arena_hdr_ok(hd, i);
		if (ah && ah->bitmap_words == (ah->nslots + 63u) / 64u &&
		    has_free_slot(hd, ah, dir[i].off))
			return i;
	}
	return -1;
}

static int set_owner(struct hd *hd, uint32_t idx, uint32_t owner)
{
	struct uh_arena_ent *e = &hd_arena_dir(hd)[idx];
	volatile int rc = 0;
	TX_BEGIN(hd->pop) {
		hd_tx_add(hd, &e->owner, sizeof(e->owner));
		e->owner = owner;
	} TX_ONABORT {
		rc = UH_EINTERNAL;
	} TX_END
	return rc;
}

/* Run the creation of one arena in its own transaction. */
static int new_arena(struct hd *hd, uint32_t kind, uint32_t slot_size, uint32_t owner,
		     uint64_t *arena_off, int *tx_errno)
{
	volatile uint64_t off = 0;
	volatile int rc = 0;
	uint32_t idx;
	TX_BEGIN(hd->pop) {
		off = hd_arena_new_tx(hd, kind, slot_size, owner, &idx);
	} TX_ONABORT {
		*tx_errno = pmemobj_tx_errno();
		rc = UH_ENOSPC;
	} TX_END
	if (!rc && hd_in_ext(hd, off))
		hd_grow_crash_point(hd, "ext_placed");
	*arena_off = off;
	return rc;
}

/* An arena leased: count it for the GC trigger (collector.c). */
static void leased(struct hd *hd, uint64_t bytes)
{
	hd->stats.arenas_leased++;
	__atomic_add_fetch(&hd->gc_leased, bytes, __ATOMIC_RELAXED);
	if (hd->gc_kick)
		hd->gc_kick(hd);
}

/* No space (hd->mu held): with a collector, let a GC cycle run (hd->mu
 * released while it does) and say whether to try again; LEASE_CYCLES
 * times per request, more while they free (below). The first cycle frees
 * the garbage; the sessions, told by the GC file's space_asked, then give
 * back the arenas it left mostly empty (libuniheap's leases.c, at their
 * next allocation or lease), and the next one's end frees those of them
 * that are empty (FORMAT.md 6.3), so that a lease of
 * another slot size, a large region or a session log finds room. After
 * each cycle the request waits until every other session that leases a
 * small arena has looked (its GC area's look word names the cycle), not
 * for a fixed time: the space a busy machine's descheduled writer holds
 * comes back as soon as it runs again. An idle session (no busy section
 * in the last two cycles), one waiting for space itself, and one that
 * does not look within LOOK_WAIT_NS keep their arenas, as a session that
 * does not acknowledge a GC phase is let be (9.3).
 *
 * Past LEASE_CYCLES a request goes on while each cycle frees something,
 * for LEASE_MORE_NS from its first at most: with writers that make
 * garbage as fast as the cycles free it, the others may take what each
 * cycle freed before this request looks again (it runs the cycle with
 * hd->mu released), and four such cycles in a row are not a full heap.
 * The bound stays well inside the client's 10 s call deadline. */
#define LEASE_CYCLES 4
#define LEASE_CYCLES_MAX 64
#define LEASE_MORE_NS 4000000000ull
#define LOOK_WAIT_NS 1000000000ull

/* A session that had a busy section (an allocation outside a block, a
 * commit's apply, a pin: its `seen` word, 9.3) in cycle c0 or later, c0
 * the last cycle swept when the request's first cycle began, is running;
 * one that had none is idle and need not be waited for: it gives nothing
 * back until it allocates again. Counted from the request's start, not
 * from its latest cycle: cycles that failing leases run back to back
 * must not make a writer the machine did not schedule meanwhile look
 * idle. */
static int running(struct hd *hd, uint32_t s, uint64_t c0)
{
	uint64_t seen = __atomic_load_n(&hd_gc_sess(hd, s)->seen, __ATOMIC_ACQUIRE);
	return uh_gc_cycle(seen) >= c0;
}

/* Session s waits for space in a lease: it looks only once that ends. */
static int asking(struct hd *hd, uint32_t s)
{
	return __atomic_load_n(&hd->gc_asking[s], __ATOMIC_ACQUIRE) != 0;
}

/* Mark in want[] (session_cap flags) every running active session but
 * self that leases a small arena (hd->mu held), c0 as running() says. A lease (self nonzero) skips the sessions waiting for space
 * themselves: two leases waiting for each other's look would wait until
 * the bound; an attach (self 0) waits for them too, since they look once
 * their lease ends. Returns how many. */
static uint32_t holders_locked(struct hd *hd, uint32_t self, uint64_t c0, uint8_t *want)
{
	const struct uh_arena_ent *dir = hd_arena_dir(hd);
	const struct uh_session_ent *tab = hd_session_tab(hd);
	uint32_t n = 0, cap = hd->hdr->session_cap;
	for (uint32_t i = 0; i < hd->hdr->arena_cap; i++) {	/* bounded by arena_cap */
		uint32_t o = dir[i].owner;
		if (dir[i].kind != UH_ARENA_SMALL || o == 0 || o == self || o >= cap || want[o] ||
		    tab[o].state != UH_SESS_ACTIVE || (self && asking(hd, o)) || !running(hd, o, c0))
			continue;
		want[o] = 1;
		n++;
	}
	return n;
}

/* Wait (hd->mu not held) until each session of want[] has looked at its
 * arenas after cycle c, is no longer active or (for a lease, self
 * nonzero) waits for space itself, LOOK_WAIT_NS at most. */
static void wait_looks(struct hd *hd, uint32_t self, const uint8_t *want, uint32_t cap,
		       uint64_t c)
{
	const struct uh_session_ent *tab = hd_session_tab(hd);
	uint64_t t0 = hd_mono_ns();
	for (uint32_t s = 1; s < cap; s++) {	/* bounded by session_cap */
		if (!want[s])
			continue;
		/* bounded by LOOK_WAIT_NS for all sessions together */
		while (__atomic_load_n(&tab[s].state, __ATOMIC_ACQUIRE) == UH_SESS_ACTIVE &&
		       __atomic_load_n(hd_gc_looked(hd, s), __ATOMIC_ACQUIRE) < c &&
		       !(self && asking(hd, s))) {
			if (hd_mono_ns() - t0 > LOOK_WAIT_NS)
				return;
			struct timespec ts = { 0, 1000000 };
			nanosleep(&ts, NULL);
		}
	}
}

int hd_gc_for_space_locked(struct hd *hd, uint32_t session, struct hd_space_try *t)
{
	if (t->tried >= LEASE_CYCLES_MAX || !hd->gc_full)
		return 0;
	if (t->tried >= LEASE_CYCLES && hd_mono_ns() - t->t0 > LEASE_MORE_NS)
		return 0;
	if (!t->tried) {
		t->c0 = uh_gc_swept_cycle(__atomic_load_n(&hd->hdr->gc_state, __ATOMIC_ACQUIRE));
		t->t0 = hd_mono_ns();
	}
	int (*full)(struct hd *) = hd->gc_full;
	uint64_t returned0 = hd->stats.arenas_returned;
	uint32_t cap = hd->hdr->session_cap;
	if (!hd->gc_asking)
		hd->gc_asking = calloc(cap, 1);
	int asking = hd->gc_asking && session && session < cap;
	if (asking)
		__atomic_add_fetch(&hd->gc_asking[session], 1, __ATOMIC_ACQ_REL);
	/* Before the cycle: a session that sees the cycle end sees this too,
	 * and its look gives back what it does not fill (leases.c). */
	if (hd->gcf)
		__atomic_add_fetch(&((struct uh_gc_filehdr *)hd->gcf)->space_asked, 1,
				   __ATOMIC_RELEASE);
	pthread_mutex_unlock(&hd->mu);
	t->tried++;
	int ran = full(hd);
	pthread_mutex_lock(&hd->mu);
	uint8_t *want = hd->gcf && hd->gc_asking && ran ? calloc(cap, 1) : NULL;
	uint64_t c = uh_gc_swept_cycle(__atomic_load_n(&hd->hdr->gc_state, __ATOMIC_ACQUIRE));
	if (want && holders_locked(hd, session, t->c0, want)) {
		pthread_mutex_unlock(&hd->mu);
		wait_looks(hd, session, want, cap, c);
		pthread_mutex_lock(&hd->mu);
	}
	free(want);
	if (asking)
		__atomic_sub_fetch(&hd->gc_asking[session], 1, __ATOMIC_ACQ_REL);
	/* Another cycle only after progress: this one freed something, or a
	 * session gave arenas back since the last try (the next cycle's end
	 * frees those that are empty). A cycle given up (a stuck session), or
	 * one that found nothing while nobody gave anything back, says the
	 * next would not either, and the caller's RPC has a deadline. */
	if (ran < 2 && hd->stats.arenas_returned == returned0)
		t->tried = LEASE_CYCLES_MAX;
	return ran > 0;
}

/* A growth on demand (FORMAT.md 1.1): double the heap, by at most
 * HD_GROW_STEP_MAX but at least by what the lease needs and a chunk, up
 * to max_size; when the file system has no room for that, by what the
 * lease needs and a chunk only. 0, or the error of a heap at its maximum
 * size or of a full file system (err says which). */
static int grow_for(struct hd *hd, uint64_t need, char *err, size_t errlen)
{
	char a[32], b[32];
	uint64_t cur = hd->heap_size, max = uh_hdr_max_size(hd->hdr);
	if (cur >= max)
		return hd_err(err, errlen, UH_ENOSPC, "heap full: %s is at its maximum size, %s "
			      "(heapd --create --max-size); %s in arenas", hd->path,
			      hd_fmt_bytes(a, sizeof(a), max),
			      hd_fmt_bytes(b, sizeof(b), hd_arena_bytes_locked(hd, NULL)));
	uint64_t least = need + hd_chunk_size(hd->hdr);
	uint64_t step = cur < HD_GROW_STEP_MAX ? cur : HD_GROW_STEP_MAX;
	if (step < least)
		step = least;
	uint64_t want = max - cur < step ? max : cur + step;
	int rc = hd_grow_locked(hd, want, err, errlen);
	/* A file system with no room for the doubling may still have room
	 * for what this lease needs: the heap fills it before HeapFull. */
	if (rc == UH_ENOSPC && least < step && max - cur > least)
		rc = hd_grow_locked(hd, cur + least, err, errlen);
	if (!rc)	/* the fill trigger measures the grown heap (collector.c) */
		__atomic_store_n(&hd->gc_arena_cap, 0, __ATOMIC_RELAXED);
	return rc;
}

/* No space (hd->mu held; for an arena, a session log or a log extent):
 * first what a GC cycle and the sessions' give-back free
 * (hd_gc_for_space_locked: one round when the heap may grow, up to
 * LEASE_CYCLES or more when it may not), then, once, a growth of a heap that may
 * grow (FORMAT.md 1.1, collect first, then grow). Says whether
 * to try once more; *why is the growth's error when it was refused (err
 * says why). */
int hd_make_room_locked(struct hd *hd, uint32_t session, int tx_errno, uint64_t need,
			struct hd_space_try *t, int *why, char *err, size_t errlen)
{
	if (tx_errno == ENOSPC)
		return 0;	/* a full directory is not a lack of space */
	struct hd_spare *sp = hd->spare;
	if (sp && sp->have) {	/* the memory reserved ahead first; none until the next small lease */
		pmemobj_cancel(hd->pop, &sp->act, 1);
		sp->have = 0;
		sp->want = 0;
		return 1;
	}
	int may_grow = uh_hdr_max_size(hd->hdr) > hd->hdr->heap_size;
	if (!t->grew)	/* the fill trigger's measure (grow_for resets it) */
		__atomic_store_n(&hd->gc_arena_cap, hd_arena_bytes_locked(hd, NULL),
				 __ATOMIC_RELAXED);
	if ((!may_grow || !t->tried) && hd_gc_for_space_locked(hd, session, t))
		return 1;
	if (t->grew || !may_grow)
		return 0;	/* a heap created without --max-size does not grow */
	t->grew = 1;
	*why = grow_for(hd, need, err, errlen);
	return *why == 0;
}

static int lease_small_locked(struct hd *hd, uint32_t session, uint32_t slot_size,
			      uint64_t *off, char *err, size_t errlen)
{
	int rc, why = 0;
	struct hd_space_try tried = { 0 };
	for (;;) {	/* bounded: make_room says yes LEASE_CYCLES_MAX + 1 times at most */
		if ((rc = check_writer(hd, session, err, errlen)))
			return rc;
		int64_t idx = find_reusable(hd, slot_size, tried.tried ? session : 0);
		if (idx >= 0) {
			*off = hd_arena_dir(hd)[idx].off;
			if ((rc = set_owner(hd, (uint32_t)idx, session)))
				hd_err(err, errlen, rc, "cannot lease arena at %llu: %s",
				       (unsigned long long)*off, pmemobj_errormsg());
			return rc;
		}
		int e = 0;
		if (!new_arena(hd, UH_ARENA_SMALL, slot_size, session, off, &e))
			return 0;
		if (!hd_make_room_locked(hd, session, e, hd->hdr->arena_size, &tried, &why, err,
					 errlen))
			return why ? why : heap_full(hd, e, "arena", hd->hdr->arena_size, err,
						     errlen);
	}
}

int hd_arena_lease(struct hd *hd, uint32_t session, uint32_t slot_size, struct hd_arena *out,
		   char *err, size_t errlen)
{
	int rc;
	uint64_t off;
	pthread_mutex_lock(&hd->mu);
	if ((rc = check_writer(hd, session, err, errlen)))
		goto out;
	if (!slot_size_ok(slot_size)) {
		rc = hd_err(err, errlen, UH_EINVAL,
			    "slot size %u is not a size class (32, 48, 64, 80, ... 16384)", slot_size);
		goto out;
	}
	if ((rc = lease_small_locked(hd, session, slot_size, &off, err, errlen)))
		goto out;
	fill_out(hd, off, out);
	leased(hd, hd->hdr->arena_size);
	if (hd->spare && !hd->spare->have) {	/* the next one's memory, ahead */
		hd->spare->want = 1;
		pthread_cond_signal(&hd->spare->cv);
	}
out:
	pthread_mutex_unlock(&hd->mu);
	return rc;
}

int hd_large_lease(struct hd *hd, uint32_t session, uint64_t size, struct hd_arena *out,
		   char *err, size_t errlen)
{
	int rc;
	pthread_mutex_lock(&hd->mu);
	if ((rc = check_writer(hd, session, err, errlen)))
		goto out;
	/* The payload size must fit the object header's 31-bit size field. */
	if (size <= UH_SMALL_MAX || size > (uint64_t)UH_OBJHDR_SIZE + UH_OBJ_SIZE_MASK) {
		rc = hd_err(err, errlen, UH_EINVAL,
			    "large object of %llu bytes: size must be > %u and <= %llu",
			    (unsigned long long)size, UH_SMALL_MAX,
			    (unsigned long long)UH_OBJHDR_SIZE + UH_OBJ_SIZE_MASK);
		goto out;
	}
	uint32_t slot = (uint32_t)UH_ALIGN_UP(size, 64);
	uint64_t off;
	int e = 0, why = 0;
	struct hd_space_try tried = { 0 };
	uint64_t need = uh_arena_first_slot_rel(1) + slot;
	while (new_arena(hd, UH_ARENA_LARGE, slot, session, &off, &e)) {	/* <= LEASE_CYCLES_MAX + 2 */
		if (hd_make_room_locked(hd, session, e, need, &tried, &why, err, errlen) &&
		    !(rc = check_writer(hd, session, err, errlen)))
			continue;
		if (why)
			rc = why;
		else if (!rc)
			rc = heap_full(hd, e, "region for a large object",
				       uh_arena_first_slot_rel(1) + slot + HD_PMEMOBJ_ALLOC_HDR,
				       err, errlen);
		goto out;
	}
	fill_out(hd, off, out);
	leased(hd, uh_arena_first_slot_rel(1) + slot);
out:
	pthread_mutex_unlock(&hd->mu);
	return rc;
}

/* The directory index of the arena at arena_off, or -1 if there is none. */
static int64_t arena_index_of(struct hd *hd, uint64_t arena_off)
{
	/* The offset comes from a client: arena headers are 16-byte aligned,
	 * and a misaligned one must not even be read. */
	if (arena_off % 16 || !hd_in_heap(hd, arena_off, sizeof(struct uh_arena_hdr)))
		return -1;
	const struct uh_arena_hdr *ah = (const struct uh_arena_hdr *)(hd->base + arena_off);
	if (ah->magic != UH_ARENA_MAGIC || ah->dir_index >= hd->hdr->arena_cap)
		return -1;
	uint32_t idx = (uint32_t)ah->dir_index;
	if (hd_arena_dir(hd)[idx].off != arena_off || !hd_arena_hdr_ok(hd, idx))
		return -1;
	return idx;
}

/* Free arena idx and clear its directory entry, inside the caller's
 * transaction: the entry is cleared before libpmemobj can hand the memory
 * out again (the free takes effect at commit). */
static void arena_free_tx(struct hd *hd, uint32_t idx)
{
	struct uh_arena_ent *e = &hd_arena_dir(hd)[idx];
	if (hd_in_ext(hd, e->off))
		hd_chunks_mark_tx(hd, e->off, e->size, 0);
	else
		pmemobj_tx_free(hd_oid(hd, hd->base + e->off));
	hd_tx_add(hd, e, sizeof(*e));
	memset(e, 0, sizeof(*e));
	hd_tx_add(hd, &hd->hdr->arena_count, sizeof(hd->hdr->arena_count));
	hd->hdr->arena_count--;
}

/* Free arena idx in one transaction; with reach >= 0 (a small arena),
 * first move the heap's gen_seed past seed + reach unless it is past it
 * already (free_small_locked says why). */
static int arena_free_locked(struct hd *hd, uint32_t idx, uint32_t seed, int64_t reach)
{
	volatile int rc = 0;
	TX_BEGIN(hd->pop) {
		if (reach >= 0 && ((hd->hdr->gen_seed - seed) & UH_GEN_MASK) <= (uint64_t)reach) {
			hd_tx_add(hd, &hd->hdr->gen_seed, sizeof(hd->hdr->gen_seed));
			hd->hdr->gen_seed = (seed + (uint32_t)reach + 1) & UH_GEN_MASK;
		}
		arena_free_tx(hd, idx);
	} TX_ONABORT {
		rc = UH_EINTERNAL;
	} TX_END
	if (rc)
		hd_log("error", "arena_free_failed", "dir_index=%u reason=%s", idx,
		       pmemobj_errormsg());
	return rc;
}

int hd_large_free_locked(struct hd *hd, uint32_t idx)
{
	return arena_free_locked(hd, idx, 0, -1);
}

/* Small arena idx holds no object: every bitmap bit is clear and no slot
 * has its valid bit. A valid object always has its bit set (a claim sets
 * the bit before the valid bit; a free, the sweep and a rollback clear the
 * valid bit first), so the bitmap says it; the valid bits are read as
 * well, so that a bit lost (run-time state: recovery rebuilds bitmaps)
 * could never give a live object's memory away. *reach = how far past the
 * arena's seed its slots' generations went, (g - seed) mod 2^16 at most. */
static int small_empty(struct hd *hd, uint32_t idx, uint32_t *reach)
{
	const struct uh_arena_hdr *ah = hd_arena_hdr_ok(hd, idx);
	if (!ah || hd_arena_dir(hd)[idx].kind != UH_ARENA_SMALL)
		return 0;
	const uint64_t *bm = uh_arena_bitmap(hd->base, hd_arena_dir(hd)[idx].off);
	for (uint32_t w = 0; w < ah->bitmap_words; w++)	/* bounded by bitmap_words */
		if (__atomic_load_n(&bm[w], __ATOMIC_ACQUIRE))
			return 0;
	*reach = 0;
	for (uint32_t k = 0; k < ah->nslots; k++) {	/* bounded by nslots */
		const struct uh_objhdr *oh = (const struct uh_objhdr *)
			(hd->base + ah->first_slot + (uint64_t)k * ah->slot_size);
		if (__atomic_load_n(&oh->size, __ATOMIC_ACQUIRE) & UH_OBJ_VALID)
			return 0;
		uint32_t word = __atomic_load_n(&oh->class_word, __ATOMIC_ACQUIRE);
		uint32_t d = (uh_word_gen(word) - ah->gen_seed) & UH_GEN_MASK;
		if (word && d > *reach)
			*reach = d;
	}
	return 1;
}

/* Free small arena idx, and move the heap's gen_seed past every
 * generation its slots reached (seed + reach), unless it is past them
 * already, in the same transaction (FORMAT.md 6.3): a slot a later arena
 * puts at one of its offsets never starts at a generation a stale
 * reference to the freed slot may carry. */
static int free_small_locked(struct hd *hd, uint32_t idx, uint32_t reach)
{
	const struct uh_arena_hdr *ah = hd_arena_hdr_ok(hd, idx);
	return arena_free_locked(hd, idx, ah->gen_seed & UH_GEN_MASK, reach);
}

/* Why this is safe (FORMAT.md 6.3): owner 0 means no session may set a
 * bit in the arena: only the leasing session claims slots, a session's
 * leases end with it (or with ReturnArena), and a client that re-attaches
 * keeps only the arenas heapd hands its new session. hd->mu, which every
 * lease takes, keeps the arena from being leased meanwhile. With no bit
 * and no valid bit, no reference into the arena names a live object. The
 * directory entry is cleared in the transaction that frees the memory, so
 * every arena index drops the arena before the memory is handed out again
 * (common/arena.c), and a new arena there starts its generations past any
 * stale reference's (gen_seed, moved past the freed slots' generations). */
uint32_t hd_arenas_free_empty(struct hd *hd)
{
	const struct uh_arena_ent *dir = hd_arena_dir(hd);
	uint32_t n = 0, reach;
	int failed = 0;
	/* hd->mu one arena at a time: a free persists, and leases wait. */
	for (uint32_t i = 0; i < hd->hdr->arena_cap && !failed; i++) {	/* bounded by cap */
		pthread_mutex_lock(&hd->mu);
		if (dir[i].kind == UH_ARENA_SMALL && dir[i].owner == 0 && small_empty(hd, i, &reach)) {
			failed = free_small_locked(hd, i, reach) != 0;	/* logged; next cycle */
			n += !failed;
			if (!failed)
				uh_arena_index_build(&hd->ix);
		}
		pthread_mutex_unlock(&hd->mu);
	}
	return n;
}

/* A large arena whose only slot holds no object: its bit is clear and the
 * object there (if any) has no valid bit. The bit alone is not enough: it
 * is run-time state, never persisted, so after a power loss it is clear
 * under a committed object whose valid bit did reach the media; start-up
 * recovery reaps the old sessions before its GC rebuilds the bits. */
static int large_unused(struct hd *hd, uint32_t idx)
{
	const struct uh_arena_ent *e = &hd_arena_dir(hd)[idx];
	if (e->kind != UH_ARENA_LARGE || uh_bitmap_test(uh_arena_bitmap(hd->base, e->off), 0))
		return 0;
	const struct uh_arena_hdr *ah = (const struct uh_arena_hdr *)(hd->base + e->off);
	if (!hd_in_heap(hd, ah->first_slot, UH_OBJHDR_SIZE))
		return 1;
	const struct uh_objhdr *oh = (const struct uh_objhdr *)(hd->base + ah->first_slot);
	return !(oh->size & UH_OBJ_VALID);
}

/* The large arena's slot has held an object (its class word is set). */
static int large_was_used(struct hd *hd, uint32_t idx)
{
	const struct uh_arena_hdr *ah = hd_arena_hdr_ok(hd, idx);
	if (!ah)
		return 0;
	const struct uh_objhdr *oh = (const struct uh_objhdr *)(hd->base + ah->first_slot);
	return __atomic_load_n(&oh->class_word, __ATOMIC_ACQUIRE) != 0 &&
	       !(__atomic_load_n(&oh->size, __ATOMIC_ACQUIRE) & UH_OBJ_VALID);
}

void hd_arenas_release_tx(struct hd *hd, uint32_t session)
{
	struct uh_arena_ent *dir = hd_arena_dir(hd);
	for (uint32_t i = 0; i < hd->hdr->arena_cap; i++) {	/* bounded by arena_cap */
		if (dir[i].kind == UH_ARENA_UNUSED || dir[i].owner != session)
			continue;
		if (hd_arena_hdr_ok(hd, i) && large_unused(hd, i)) {
			arena_free_tx(hd, i);
			continue;
		}
		hd_tx_add(hd, &dir[i].owner, sizeof(dir[i].owner));
		dir[i].owner = 0;
	}
}

int hd_arena_return(struct hd *hd, uint32_t session, uint64_t arena_off, char *err,
		    size_t errlen)
{
	int rc;
	pthread_mutex_lock(&hd->mu);
	if ((rc = hd_session_active_locked(hd, session, err, errlen)))
		goto out;
	int64_t idx = arena_index_of(hd, arena_off);
	if (idx < 0) {
		rc = hd_err(err, errlen, UH_EINVAL, "no arena at offset %llu",
			    (unsigned long long)arena_off);
		goto out;
	}
	/* A large region whose one object was freed may be given back by any
	 * session (the one that freed it): it is never leased again. Its
	 * class word says it held an object: a region just leased, whose
	 * object is not claimed yet, is zero there and stays. */
	if (hd_arena_dir(hd)[idx].owner != session &&
	    !(large_unused(hd, (uint32_t)idx) && large_was_used(hd, (uint32_t)idx))) {
		rc = hd_err(err, errlen, UH_EINVAL, "arena at offset %llu is not leased by session %u",
			    (unsigned long long)arena_off, session);
		goto out;
	}
	/* An unused large region has no reason to stay: give it back to the
	 * pool rather than keep it for a later object of that exact size. */
	if (large_unused(hd, (uint32_t)idx))
		rc = hd_large_free_locked(hd, (uint32_t)idx);
	else
		rc = set_owner(hd, (uint32_t)idx, 0);
	if (rc)
		hd_err(err, errlen, rc, "cannot return arena at offset %llu: %s",
		       (unsigned long long)arena_off, pmemobj_errormsg());
	else
		hd->stats.arenas_returned++;
out:
	pthread_mutex_unlock(&hd->mu);
	return rc;
}

/* ---- the small arena reserved ahead (hd->spare) ---- */

/* Reserve a small arena's memory, zeroed, whenever a lease used the last
 * one: libpmemobj's zeroing of fresh pages (their page faults) is most of
 * a lease's time, and here it runs while the client that leased goes on.
 * Under hd->mu, as every allocation of heapd's is, and only while the
 * pool has room for it beside what the leases may need (pool_has_room). */
static void *spare_main(void *arg)
{
	struct hd *hd = arg;
	struct hd_spare *sp = hd->spare;

	pthread_mutex_lock(&hd->mu);
	for (;;) {	/* bound: until hd_spare_stop */
		while (!sp->stop && (sp->have || !sp->want))
			pthread_cond_wait(&sp->cv, &hd->mu);
		if (sp->stop)
			break;
		sp->want = 0;
		uint64_t bytes = small_arena_bytes(hd);
		if (!pool_has_room(hd, bytes))
			continue;
		PMEMoid oid = pmemobj_xreserve(hd->pop, &sp->act, bytes, HD_TYPE_ARENA,
					       POBJ_XALLOC_ZERO);
		if (OID_IS_NULL(oid))
			continue;
		sp->oid = oid;
		sp->have = 1;
	}
	pthread_mutex_unlock(&hd->mu);
	return NULL;
}

int hd_spare_start(struct hd *hd)
{
	struct hd_spare *sp = calloc(1, sizeof(*sp));

	if (!sp || pthread_cond_init(&sp->cv, NULL) != 0) {
		free(sp);
		return -1;
	}
	pthread_mutex_lock(&hd->mu);
	hd->spare = sp;
	pthread_mutex_unlock(&hd->mu);
	if (pthread_create(&sp->thread, NULL, spare_main, hd) != 0) {
		pthread_mutex_lock(&hd->mu);
		hd->spare = NULL;
		pthread_mutex_unlock(&hd->mu);
		pthread_cond_destroy(&sp->cv);
		free(sp);
		return -1;
	}
	return 0;
}

void hd_spare_stop(struct hd *hd)
{
	pthread_mutex_lock(&hd->mu);
	struct hd_spare *sp = hd->spare;
	if (sp) {
		sp->stop = 1;
		pthread_cond_signal(&sp->cv);
	}
	pthread_mutex_unlock(&hd->mu);
	if (!sp)
		return;
	pthread_join(sp->thread, NULL);
	pthread_mutex_lock(&hd->mu);
	if (sp->have)
		pmemobj_cancel(hd->pop, &sp->act, 1);
	hd->spare = NULL;
	pthread_mutex_unlock(&hd->mu);
	pthread_cond_destroy(&sp->cv);
	free(sp);
}
