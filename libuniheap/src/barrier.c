/*
 * barrier.c -- persisting: flushes, barriers and what every barrier
 * carries along (the lazy logs of FORMAT.md 8.4), in the three durability
 * modes; and the test hooks on them (UH_CRASH_AT, UH_PMTRACE, UH_MUTANT).
 *
 * uh_flush sends a range towards the media (pmem: the CPU's flush; sync:
 * remembered, msync'ed at the barrier; memory: nothing); uh_barrier makes
 * every range flushed before it durable. The commit protocol (tx.c,
 * logapply.c through h->persist) is written in terms of these two only.
 *
 * Lazy logs. A commit marks its log APPLIED without a barrier of its own:
 * the store reaches the media with the session's next barrier. Until then
 * a power loss could leave the log COMMITTED, and recovery would replay
 * it. That is harmless unless another block wrote the same bytes (or
 * freed and reused the same slot) after this one released its locks. So a
 * session that leaves a lazy log sets its bit in the header's lazy_logs,
 * before it releases any lock, and every barrier of every client first
 * flushes the log header of each session named there: a block that took
 * over one of those locks (or slots) has, by its first barrier, made the
 * earlier log's APPLIED durable. A bit stays set while its session lives;
 * heapd clears it when it ends the session, after the log is IDLE on the
 * media.
 *
 * Near the bottom of the library: it calls only pmtrace.c and libpmem2.
 */
#include <libpmem2.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmtrace.h"
#include "uhint.h"

void uh_flush(uh_heap *h, const void *addr, size_t len)
{
	h->st.flushes++;
	if (h->pmtrace)	/* the power-loss tests: in every mode, the protocol's ranges */
		uh_pmtrace_flush(h->base, h->size, addr, len, UH_PMT_FLUSH);
	if (h->durability == UH_DUR_MEMORY || len == 0)
		return;
	if (h->durability == UH_DUR_PMEM) {
		pmem2_get_flush_fn(h->m->map)(addr, len);
		return;
	}
	/* sync: remember the range; the barrier msyncs merged ranges. */
	if (h->ndirty == h->dirty_cap) {
		uint32_t cap = h->dirty_cap ? h->dirty_cap * 2 : 64;
		struct uh_range *r = realloc(h->dirty, cap * sizeof(*r));
		if (!r) {	/* no memory to defer: persist now */
			pmem2_get_flush_fn(h->m->map)(addr, len);
			return;
		}
		h->dirty = r;
		h->dirty_cap = cap;
	}
	uint64_t s = (uint64_t)((const char *)addr - h->base);
	h->dirty[h->ndirty++] = (struct uh_range){ s, s + len };
}

/* One msync over the span of every range flushed since the last barrier:
 * each msync call on a file costs the device a cache flush, and the kernel
 * writes only the dirty pages of the span (pages other sessions dirtied
 * there go to the media early, which the protocol always allows). */
static void sync_dirty(uh_heap *h)
{
	const uint64_t page = 4096;
	uint64_t s = h->dirty[0].start, e = h->dirty[0].end;

	for (uint32_t i = 1; i < h->ndirty; i++) {	/* bound: ndirty */
		if (h->dirty[i].start < s)
			s = h->dirty[i].start;
		if (h->dirty[i].end > e)
			e = h->dirty[i].end;
	}
	s &= ~(page - 1);
	pmem2_get_flush_fn(h->m->map)(h->base + s, e - s);
	h->ndirty = 0;
}

void uh_barrier(uh_heap *h)
{
	if (++h->st.barriers == h->crash_at)
		kill(getpid(), SIGKILL);	/* test hook: die before barrier k */
	uh_lazy_flush(h);	/* older blocks' APPLIED goes with it */
	if (h->pmtrace)
		uh_pmtrace_write(UH_PMT_BARRIER, 0, NULL, 0);
	if (h->durability == UH_DUR_PMEM)
		pmem2_get_drain_fn(h->m->map)();
	else if (h->durability == UH_DUR_SYNC && h->ndirty)
		sync_dirty(h);
}

/* ---- lazy logs ---- */

const struct uh_log_hdr *uh_session_log(uh_heap *h, uint32_t s)
{
	const struct uh_hdr *hd = h->hdr;

	if (s == 0 || s >= hd->session_cap)
		return NULL;
	const struct uh_session_ent *e =
		(const void *)(h->base + hd->session_tab_off) + (size_t)s * sizeof(*e);
	uint64_t off = __atomic_load_n(&e->log_off, __ATOMIC_ACQUIRE);
	/* A log in the extension (FORMAT.md 1.1), past what this handle has
	 * mapped: the heap grew before its session attached. */
	if (off > h->size - sizeof(struct uh_log_hdr))
		uh_map_more(h);
	if (off < UH_HDR_SIZE || off % 8 || off > h->size - sizeof(struct uh_log_hdr))
		return NULL;
	return (const void *)(h->base + off);
}

void uh_lazy_mark(uh_heap *h)
{
	if (h->session >= UH_SESSION_CAP) {
		/* No bit to name it (a table larger than the format's):
		 * persist APPLIED now, as format 3 did. */
		uh_barrier(h);
		return;
	}
	uint64_t *w = &h->hdr->lazy_logs[h->session / 64];
	uint64_t bit = 1ull << (h->session % 64);

	if (!(__atomic_load_n(w, __ATOMIC_RELAXED) & bit))
		__atomic_or_fetch(w, bit, __ATOMIC_SEQ_CST);
}

void uh_lazy_flush(uh_heap *h)
{
	const uint64_t *m = h->hdr->lazy_logs;
	uint32_t cap = h->hdr->session_cap;

	if (h->durability == UH_DUR_MEMORY && !h->pmtrace)
		return;		/* no barrier to take part in */
	if (h->mutant == UH_MUTANT_LAZY_FLUSH)
		return;
	for (uint32_t i = 0; i < UH_LAZY_WORDS; i++) {	/* bound: UH_LAZY_WORDS */
		uint64_t bits = __atomic_load_n(&m[i], __ATOMIC_ACQUIRE);
		while (bits) {	/* bound: 64 bits */
			uint32_t s = i * 64 + (uint32_t)__builtin_ctzll(bits);
			bits &= bits - 1;
			const struct uh_log_hdr *log = s < cap ? uh_session_log(h, s) : NULL;
			if (log)
				uh_flush(h, log, sizeof(*log));
		}
	}
}

/* ---- logapply's callbacks and the test hooks ---- */

/* logapply's persist callbacks. UH_MUTANT=apply-flush or apply-barrier
 * (tests only) drops their flushes or their barrier: the power-loss test
 * must then report lost or torn blocks. */
static void persist_flush(void *ctx, const void *a, size_t n)
{
	uh_heap *h = ctx;

	if (h->mutant != UH_MUTANT_APPLY_FLUSH)
		uh_flush(h, a, n);
}

static void persist_drain(void *ctx)
{
	uh_heap *h = ctx;

	if (h->mutant != UH_MUTANT_APPLY_BARRIER)
		uh_barrier(h);
}

static int mutant_of(const char *s)
{
	if (s && !strcmp(s, "apply-flush"))
		return UH_MUTANT_APPLY_FLUSH;
	if (s && !strcmp(s, "apply-barrier"))
		return UH_MUTANT_APPLY_BARRIER;
	if (s && !strcmp(s, "lazy-flush"))
		return UH_MUTANT_LAZY_FLUSH;
	return 0;
}

void uh_barrier_init(uh_heap *h)
{
	h->persist = (struct uh_persist){ persist_flush, persist_drain, h, NULL };
	const char *crash = getenv("UH_CRASH_AT");
	h->crash_at = crash ? strtoull(crash, NULL, 10) : 0;
	h->pmtrace = uh_pmtrace_on();
	h->mutant = mutant_of(getenv("UH_MUTANT"));
	const char *hold = getenv("UH_COMMIT_HOLD");
	if (hold && strlen(hold) < sizeof(h->commit_hold) - 4)
		strcpy(h->commit_hold, hold);
}
