/*
 * logs.c -- the extents that let a session's redo log grow (FORMAT.md
 * 8.1): leased on demand, chained from the log header, freed when the
 * session trims its log or ends.
 *
 * An extent is allocated and linked after the log's last segment in one
 * libpmemobj transaction, so a crash leaves it either reachable from the
 * log or never allocated: whoever reaps the session frees every extent
 * the chain names, in the transaction that frees the log area. The
 * client writes only an extent's entries and its nbytes; heapd writes
 * magic, session, size and next, and re-checks all of them (the memory
 * is client-writable) before it follows a link.
 *
 * Where a log lives (FORMAT.md 1.1, "Logs in the extension"): a log area
 * or extent is a libpmemobj allocation in the pool while the pool has
 * room, else whole chunks of a grown heap's extension (chunks.c), so
 * that only --max-size or a full file system ever refuses a writer its
 * log. hd_log_room_tx and hd_log_room_free_tx are the one place that
 * tells the two apart: an offset at or past ext_start is chunks, below
 * it a pool allocation.
 */
#include <errno.h>
#include <string.h>

#include "core.h"
#include "logapply.h"

#define HD_LOG_EXT_MAX (1ull << 30)

struct uh_log_hdr *hd_session_log_locked(struct hd *hd, uint32_t slot)
{
	const struct uh_session_ent *e = &hd_session_tab(hd)[slot];
	if (e->log_off == 0 || e->log_size < sizeof(struct uh_log_hdr) ||
	    !hd_in_heap(hd, e->log_off, e->log_size))
		return NULL;
	struct uh_log_hdr *log = (struct uh_log_hdr *)(hd->base + e->log_off);
	if (log->magic != UH_LOG_MAGIC || log->session != slot) {
		hd_log("warn", "log_damaged", "session=%u log_off=%llu reason=bad_header", slot,
		       (unsigned long long)e->log_off);
		return NULL;
	}
	return log;
}

struct uh_log_loc hd_log_loc(struct hd *hd, uint32_t slot, struct uh_log_hdr *log)
{
	struct uh_log_loc l = { hd->base, hd->heap_size, log, hd_session_tab(hd)[slot].log_size,
				hd->hdr->format_version };
	return l;
}

/* Pool bytes the logs of active sessions take: areas and extents below
 * ext_start, libpmemobj's headers included. Bounded by the session table
 * and each chain's budget. */
static uint64_t pool_log_bytes_locked(struct hd *hd)
{
	const struct uh_session_ent *tab = hd_session_tab(hd);
	uint64_t ext = hd_ext_start(hd->hdr), sum = 0;
	for (uint32_t s = 1; s < hd->hdr->session_cap; s++) {	/* bounded by session_cap */
		struct uh_log_hdr *log;
		if (tab[s].state != UH_SESS_ACTIVE || !(log = hd_session_log_locked(hd, s)))
			continue;
		if (tab[s].log_off < ext)
			sum += tab[s].log_size + HD_PMEMOBJ_ALLOC_HDR;
		struct uh_log_loc l = hd_log_loc(hd, s, log);
		uint64_t budget = hd->heap_size / UH_LOG_EXT_MIN;
		for (uint64_t next = log->next; next && budget--;) {	/* bound: budget */
			struct uh_log_ext *x = uh_log_ext_at(&l, next);
			if (!x)
				break;
			if (next < ext)
				sum += x->size + HD_PMEMOBJ_ALLOC_HDR;
			next = x->next;
		}
	}
	return sum;
}

/* A log may take pool memory: always in a heap that cannot grow (the pool
 * is all there is); in one that may grow, while arenas and logs leave the
 * pool HD_POOL_RESERVE_MORE (at most half of it) for class descriptors,
 * which only the pool holds. */
static int pool_takes_log(struct hd *hd, uint64_t bytes)
{
	const struct uh_hdr *h = hd->hdr;
	if (!h->chunk_map_off)
		return 1;
	uint64_t keep = HD_POOL_RESERVE_MORE < h->heap_size / 2 ? HD_POOL_RESERVE_MORE :
								  h->heap_size / 2;
	uint64_t used = hd_pool_arena_bytes_locked(hd) + pool_log_bytes_locked(hd) + bytes;
	return used <= h->heap_size - keep;
}

uint64_t hd_log_room_tx(struct hd *hd, uint64_t bytes, int zero)
{
	if (pool_takes_log(hd, bytes)) {
		uint64_t flags = POBJ_XALLOC_NO_ABORT | (zero ? POBJ_XALLOC_ZERO : 0);
		PMEMoid oid = pmemobj_tx_xalloc(bytes, HD_TYPE_LOG, flags);
		if (!OID_IS_NULL(oid))
			return oid.off;
	}
	if (!hd->hdr->chunk_map_off)
		pmemobj_tx_abort(ENOMEM);	/* a heap that never grows; does not return */
	/* Zeroed whatever zero says: a chunk must not expose what its last
	 * owner left (FORMAT.md 6), and only new memory escapes that rule. */
	return hd_chunks_alloc_tx(hd, bytes);	/* aborts with ENOMEM when none */
}

/* A log chain link (a u64 heapd alone writes) set to val inside the
 * caller's transaction. In the pool, libpmemobj snapshots it; in the
 * extension it cannot, so the transaction records the write in session
 * slot's redo pair instead and hd_log_redo_locked makes it after the
 * commit (FORMAT.md 7): a crash leaves the write either undone with the
 * transaction or recorded and made at the next start. */
static void link_set_tx(struct hd *hd, uint32_t slot, uint64_t *link, uint64_t val)
{
	uint64_t off = (uint64_t)((char *)link - hd->base);
	if (!hd_in_ext(hd, off)) {
		hd_tx_add(hd, link, sizeof(*link));
		*link = val;
		return;
	}
	struct uh_session_ent *e = &hd_session_tab(hd)[slot];
	hd_tx_add(hd, &e->redo_off, 2 * sizeof(uint64_t));
	e->redo_off = off;
	e->redo_val = val;
}

/* After a commit that set slot's redo pair (a link in the extension):
 * the test hook's crash point named point, then the write. */
static void link_made(struct hd *hd, uint32_t slot, const char *point)
{
	if (!hd_session_tab(hd)[slot].redo_off)
		return;
	hd_grow_crash_point(hd, point);
	hd_log_redo_locked(hd, slot);
}

void hd_log_redo_locked(struct hd *hd, uint32_t slot)
{
	struct uh_session_ent *e = &hd_session_tab(hd)[slot];
	if (!e->redo_off)
		return;
	if (e->redo_off % 8 == 0 && hd_in_ext(hd, e->redo_off) &&
	    hd_in_heap(hd, e->redo_off, sizeof(uint64_t))) {
		uint64_t *link = (uint64_t *)(hd->base + e->redo_off);
		__atomic_store_n(link, e->redo_val, __ATOMIC_RELEASE);
		uh_persist_range(&hd->persist, link, sizeof(*link));
	} else {
		hd_log("warn", "log_redo_dropped", "session=%u off=%llu reason=outside_extension",
		       slot, (unsigned long long)e->redo_off);
	}
	/* Made (or never to be made): the pair goes, as any write heapd
	 * makes to the table, in a transaction. */
	TX_BEGIN(hd->pop) {
		hd_tx_add(hd, &e->redo_off, 2 * sizeof(uint64_t));
		e->redo_off = 0;
		e->redo_val = 0;
	} TX_END
}

void hd_log_room_free_tx(struct hd *hd, uint64_t off, uint64_t bytes)
{
	if (hd_in_ext(hd, off)) {
		uint64_t chunk = hd_chunk_size(hd->hdr);
		/* An extent's size lies in client-writable memory: one that
		 * does not look like heapd's leaves its chunks taken (a leak,
		 * logged) rather than free chunks it never had. */
		if ((off - hd_ext_start(hd->hdr)) % chunk || bytes == 0 || bytes > HD_LOG_EXT_MAX ||
		    !hd_in_heap(hd, off, bytes)) {
			hd_log("warn", "log_room_leaked", "off=%llu bytes=%llu reason=bad_size",
			       (unsigned long long)off, (unsigned long long)bytes);
			return;
		}
		hd_chunks_mark_tx(hd, off, bytes, 0);
	} else
		pmemobj_tx_free(hd_oid(hd, hd->base + off));
}

void hd_log_room_write_tx(struct hd *hd, uint64_t off, const void *src, size_t len)
{
	void *at = hd->base + off;
	/* New memory needs no undo copy; libpmemobj flushes pool bytes at
	 * commit, never extension bytes, which are persisted here. */
	if (hd_in_ext(hd, off)) {
		memcpy(at, src, len);
		uh_persist_range(&hd->persist, at, len);
	} else {
		hd_tx_xadd(hd, at, len, POBJ_XADD_NO_SNAPSHOT);
		memcpy(at, src, len);
	}
}

/* The u64 that links the log's last segment to a next one: the header's
 * next, or the last extent's. NULL when a link is damaged. */
static uint64_t *chain_tail(struct hd *hd, const struct uh_log_loc *l)
{
	uint64_t *link = &l->log->next;
	uint64_t budget = hd->heap_size / UH_LOG_EXT_MIN;

	while (*link) {	/* bound: budget extents */
		struct uh_log_ext *x = uh_log_ext_at(l, *link);
		if (!x || budget-- == 0)
			return NULL;
		link = &x->next;
	}
	return link;
}

/* Allocate an extent of size bytes and link it at *link, in one
 * transaction. Its offset; 0 when there is no room, *tx_errno saying
 * why (ENOMEM: the pool and the extension are full). */
static uint64_t new_extent(struct hd *hd, uint32_t session, uint64_t size, uint64_t *link,
			   int *tx_errno)
{
	volatile uint64_t at = 0;
	TX_BEGIN(hd->pop) {
		/* Not zeroed in the pool: only [64, 64 + nbytes) is ever
		 * read. Aborts the transaction when there is no room. */
		uint64_t off = hd_log_room_tx(hd, size, 0);
		struct uh_log_ext x = { .magic = UH_LOG_EXT_MAGIC, .session = session,
					.size = size };
		hd_log_room_write_tx(hd, off, &x, sizeof(x));
		link_set_tx(hd, session, link, off);
		at = off;
	} TX_ONABORT {
		*tx_errno = pmemobj_tx_errno();
		at = 0;
	} TX_END
	if (at)
		link_made(hd, session, "log_linked");
	return at;
}

/* The link a new extent of the session's log goes to, checked anew at
 * each try (hd->mu is released while a GC cycle runs); NULL with err set
 * when the session or its chain cannot take one. */
static uint64_t *extent_link_locked(struct hd *hd, uint32_t session, int *rc, char *err,
				    size_t errlen)
{
	struct uh_log_hdr *log;
	uint64_t *link;
	if ((*rc = hd_session_active_locked(hd, session, err, errlen)))
		return NULL;
	if (!(log = hd_session_log_locked(hd, session))) {
		*rc = hd_err(err, errlen, UH_EINVAL, "session %u has no log (read-only)", session);
		return NULL;
	}
	struct uh_log_loc l = hd_log_loc(hd, session, log);
	if (!(link = chain_tail(hd, &l)))
		*rc = hd_err(err, errlen, UH_EINVAL, "the log chain of session %u is damaged",
			     session);
	return link;
}

int hd_log_extent_lease(struct hd *hd, uint32_t session, uint64_t size, uint64_t *off,
			uint64_t *got, char *err, size_t errlen)
{
	struct hd_space_try tried = { 0 };
	uint64_t *link;
	int rc = 0, why = 0;

	if (size < UH_LOG_EXT_MIN || size > HD_LOG_EXT_MAX)
		return hd_err(err, errlen, UH_EINVAL, "log extent of %llu bytes: size must be "
			      "%u .. %llu", (unsigned long long)size, UH_LOG_EXT_MIN,
			      (unsigned long long)HD_LOG_EXT_MAX);
	size = UH_ALIGN_UP(size, 64) - HD_PMEMOBJ_ALLOC_HDR;
	pthread_mutex_lock(&hd->mu);
	for (;;) {	/* bounded: make_room says yes a few times at most (arenas.c) */
		int tx_errno = 0;
		if (!(link = extent_link_locked(hd, session, &rc, err, errlen)))
			goto out;
		if ((*off = new_extent(hd, session, size, link, &tx_errno)))
			break;
		/* As for an arena: a GC cycle first, then a growth of a heap
		 * that may grow (FORMAT.md 1.1). */
		if (hd_make_room_locked(hd, session, tx_errno, size, &tried, &why, err, errlen))
			continue;
		if (why) {
			rc = why;
		} else {
			char a[32], b[32], c[32];
			rc = hd_err(err, errlen, UH_ENOSPC, "heap full: cannot lease a %s log "
				    "extent (heap %s, %s in arenas)",
				    hd_fmt_bytes(a, sizeof(a), size),
				    hd_fmt_bytes(b, sizeof(b), hd->heap_size),
				    hd_fmt_bytes(c, sizeof(c), hd_arena_bytes_locked(hd, NULL)));
		}
		goto out;
	}
	*got = size;
	hd->stats.log_extents_leased++;
out:
	pthread_mutex_unlock(&hd->mu);
	return rc;
}

void hd_log_extents_free_tx(struct hd *hd, uint32_t slot, struct uh_log_hdr *log)
{
	struct uh_log_loc l = hd_log_loc(hd, slot, log);
	uint64_t budget = hd->heap_size / UH_LOG_EXT_MIN;
	uint64_t next = log->next;

	/* A damaged link ends the walk: what lies beyond it is lost to the
	 * pool, never freed twice or read outside the heap. */
	while (next && budget--) {	/* bound: budget extents */
		struct uh_log_ext *x = uh_log_ext_at(&l, next);
		if (!x)
			break;
		uint64_t after = x->next;
		hd_log_room_free_tx(hd, next, x->size);
		next = after;
	}
	link_set_tx(hd, slot, &log->next, 0);
}

int hd_log_trim(struct hd *hd, uint32_t session, char *err, size_t errlen)
{
	int rc;
	pthread_mutex_lock(&hd->mu);
	struct uh_log_hdr *log;
	if ((rc = hd_session_active_locked(hd, session, err, errlen)))
		goto out;
	if (!(log = hd_session_log_locked(hd, session)) || !log->next)
		goto out;	/* nothing to give back */
	if (__atomic_load_n(&log->state, __ATOMIC_ACQUIRE) != UH_LOG_IDLE) {
		rc = hd_err(err, errlen, UH_ESTATE, "session %u is in a block: its log extents "
			    "are in use", session);
		goto out;
	}
	TX_BEGIN(hd->pop) {
		hd_log_extents_free_tx(hd, session, log);
	} TX_ONABORT {
		rc = hd_err(err, errlen, UH_EINTERNAL, "cannot free the log extents of session "
			    "%u: %s", session, pmemobj_errormsg());
	} TX_END
	if (!rc)
		link_made(hd, session, "log_trimmed");	/* next = 0 */
	if (!rc)
		hd->stats.log_trims++;
out:
	pthread_mutex_unlock(&hd->mu);
	return rc;
}
