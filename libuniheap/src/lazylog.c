/*
 * lazylog.c -- logs left COMMITTED on the media after their block applied
 * (FORMAT.md 8.4).
 *
 * A commit marks its log APPLIED without a barrier of its own: the store
 * reaches the media with the session's next barrier. Until then a power
 * loss could leave the log COMMITTED, and recovery would replay it. That
 * is harmless unless another block wrote the same bytes (or freed and
 * reused the same slot) after this one released its locks. So a session
 * that leaves a lazy log sets its bit in the header's lazy_logs, before it
 * releases any lock, and every barrier of every client first flushes the
 * log header of each session named there: a block that took over one of
 * those locks (or slots) has, by its first barrier, made the earlier log's
 * APPLIED durable. A bit stays set while its session lives; heapd clears it
 * when it ends the session, after the log is IDLE on the media.
 */
#include "uhint.h"

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
