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
 * transaction. Its offset, or 0 when the pool is full. */
static uint64_t new_extent(struct hd *hd, uint32_t session, uint64_t size, uint64_t *link)
{
	volatile uint64_t at = 0;
	TX_BEGIN(hd->pop) {
		/* Not zeroed: only [64, 64 + nbytes) is ever read. Aborts
		 * the transaction when the pool is full. */
		PMEMoid oid = pmemobj_tx_alloc(size, HD_TYPE_LOG);
		struct uh_log_ext *x = (struct uh_log_ext *)(hd->base + oid.off);
		hd_tx_xadd(hd, x, sizeof(*x), POBJ_XADD_NO_SNAPSHOT);
		memset(x, 0, sizeof(*x));
		x->magic = UH_LOG_EXT_MAGIC;
		x->session = session;
		x->size = size;
		hd_tx_add(hd, link, sizeof(*link));
		*link = oid.off;
		at = oid.off;
	} TX_ONABORT {
		at = 0;
	} TX_END
	return at;
}

int hd_log_extent_lease(struct hd *hd, uint32_t session, uint64_t size, uint64_t *off,
			uint64_t *got, char *err, size_t errlen)
{
	struct uh_log_hdr *log;
	uint64_t *link;
	int rc;

	pthread_mutex_lock(&hd->mu);
	if ((rc = hd_session_active_locked(hd, session, err, errlen)))
		goto out;
	if (size < UH_LOG_EXT_MIN || size > HD_LOG_EXT_MAX) {
		rc = hd_err(err, errlen, UH_EINVAL, "log extent of %llu bytes: size must be "
			    "%u .. %llu", (unsigned long long)size, UH_LOG_EXT_MIN,
			    (unsigned long long)HD_LOG_EXT_MAX);
		goto out;
	}
	if (!(log = hd_session_log_locked(hd, session))) {
		rc = hd_err(err, errlen, UH_EINVAL, "session %u has no log (read-only)", session);
		goto out;
	}
	struct uh_log_loc l = hd_log_loc(hd, session, log);
	if (!(link = chain_tail(hd, &l))) {
		rc = hd_err(err, errlen, UH_EINVAL, "the log chain of session %u is damaged",
			    session);
		goto out;
	}
	size = UH_ALIGN_UP(size, 64) - HD_PMEMOBJ_ALLOC_HDR;
	if (!(*off = new_extent(hd, session, size, link))) {
		char a[32], b[32], c[32];
		rc = hd_err(err, errlen, UH_ENOSPC, "heap full: cannot lease a %s log extent "
			    "(heap %s, %s in arenas)", hd_fmt_bytes(a, sizeof(a), size),
			    hd_fmt_bytes(b, sizeof(b), hd->heap_size),
			    hd_fmt_bytes(c, sizeof(c), hd_arena_bytes_locked(hd, NULL)));
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
		pmemobj_tx_free(hd_oid(hd, x));
		next = after;
	}
	hd_tx_add(hd, &log->next, sizeof(log->next));
	log->next = 0;
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
		hd->stats.log_trims++;
out:
	pthread_mutex_unlock(&hd->mu);
	return rc;
}
