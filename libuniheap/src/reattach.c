/*
 * reattach.c -- clients that survive a heapd restart.
 *
 * The session's Attach stream ends when heapd dies or stops; its reader
 * thread notices at once (uhc_connected). The mapping stays valid: the
 * heap file is the same. At the next block, or the next call that needs
 * heapd, the session attaches anew to the same socket, naming its old
 * session and token: heapd recovers the old session's log as it would a
 * dead client's, hands its arenas to the new session and frees its log
 * (FORMAT.md 9). Objects, references and pointers into the mapping are
 * unchanged; only the session slot, its token and its log area are new,
 * and its area of the GC file, where its pins move under the same ids
 * (pins.c, FORMAT.md 9.3).
 *
 * A block in flight when heapd ended never commits: uh_commit (or the
 * call that needed heapd) rolls it back with UH_ECONFLICT ("heapd
 * restarted"), so uh_run and the bindings' retry loops run it again on
 * the new session. A commit checks, after it made its log COMMITTED, that
 * no new heapd has started (hdr->heapd_starts, which heapd bumps before
 * it recovers); heapd waits for every COMMITTED log of a client of the
 * previous heapd to be applied before its recovery GC. Either the client
 * sees the new heapd and rolls back, or heapd sees the commit and waits
 * for it: a commit that passed its durability barrier always completes.
 *
 * If heapd now serves another heap file, the re-attach fails with UH_EIO
 * and the mapping is left as it is: never a mapping of the wrong file.
 *
 * The files that need heapd (alloc.c, classes.c, logchain.c, tx.c) lie
 * below this one: they reach it through h->recover (uhint.h,
 * uh_ctl_ready, uh_ctl_failed, uh_reattach), which connect points at
 * uh_reattach_recovery, and only once heapd has gone away.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "uhint.h"

#define REATTACH_BUDGET_MS 60000	/* heapd may take this long to come back */
#define REATTACH_WAIT_MIN_MS 10
#define REATTACH_WAIT_MAX_MS 50

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* Test hook UH_REATTACH_HOLD=P: a re-attach whose Attach call succeeded
 * creates P.in and waits (at most 30 s) until P.go exists, before it
 * takes the new session, so that a test can attach another session into
 * the slot heapd has just freed. */
static void reattach_hold(void)
{
	const char *p = getenv("UH_REATTACH_HOLD");
	char path[4096];
	if (!p || strlen(p) > sizeof(path) - 4)
		return;
	snprintf(path, sizeof(path), "%s.in", p);
	FILE *f = fopen(path, "w");
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "%s.go", p);
	for (int i = 0; i < 3000 && access(path, F_OK) != 0; i++)	/* bound: 30 s */
		sleep_ms(10);
}

/* Take the new session: the old one is heapd's to recover now. */
static int adopt(uh_heap *h, uhc *ctl, const struct uhc_welcome *w)
{
	uint32_t old = h->session;
	int rc = uh_same_heap(h->m, w);

	if (rc == 0)
		rc = uh_session_bind(h, w);
	if (rc) {
		uhc_detach(ctl);
		return rc;
	}
	uhc_detach(h->ctl);	/* its stream has ended: this only frees it */
	h->ctl = ctl;
	/* heapd freed the old log's extents. The arenas are ours still if
	 * heapd recovered the old session in this attach; if it had reaped
	 * it before, they are not, and allocating in them now could land in
	 * an arena heapd has freed (FORMAT.md 6.3). */
	uh_alloc_keep_leased(h);
	h->chain.n = 0;
	h->chain.ext_bytes = 0;
	h->chain.cur = 0;
	h->chain.used = 0;
	/* The pins move to the new session's area under the same ids. */
	return uh_gc_reattach(h, w->gc_path, old, h->session);
}

static int reattach(uh_heap *h)
{
	/* Only once the old stream has ended: heapd reaps a session whose
	 * stream ends, and that must never be the new one's slot. */
	if (!h->ctl || uhc_connected(h->ctl))
		return 0;
	struct uhc_welcome *w = calloc(1, sizeof(*w));
	char desc[128];
	uhc *ctl = NULL;
	uint64_t t0 = mono_ns();
	long wait = REATTACH_WAIT_MIN_MS;
	int rc;

	if (!w)
		return uh_err_set(UH_ENOMEM, "re-attach: out of memory");
	/* bound: the time budget; each round sleeps at least 10 ms */
	for (;;) {
		/* No pin or unpin of another thread may write the old area
		 * once heapd has copied it and freed the slot (pins.c). */
		uh_gc_hold(h);
		rc = uhc_attach(h->m->socket, h->readonly, uh_client_desc(desc, sizeof(desc)),
				h->session, h->token, &ctl, w);
		if (rc == 0) {
			reattach_hold();
			rc = adopt(h, ctl, w);
		}
		uh_gc_unhold(h);
		if (rc != UH_EDISCONNECTED ||
		    mono_ns() - t0 > (uint64_t)REATTACH_BUDGET_MS * 1000000ull)
			break;
		sleep_ms(wait);
		wait = wait * 2 < REATTACH_WAIT_MAX_MS ? wait * 2 : REATTACH_WAIT_MAX_MS;
	}
	free(w);
	if (rc == UH_EDISCONNECTED)
		return uh_err_set(rc, "heapd at %s ended and did not come back within %d s; "
				  "start heapd, then use the heap again", h->m->socket,
				  REATTACH_BUDGET_MS / 1000);
	if (rc)
		return rc;
	h->st.reattaches++;
	h->st.reattach_ns += mono_ns() - t0;
	return 0;
}

#define STREAM_END_WAIT_MS 2000	/* a failed call's heapd: its stream ends soon */

/* uh_ctl_failed past its first checks: rc is UH_EDISCONNECTED. */
static int ctl_failed(uh_heap *h, int rc, int *again)
{
	if (!uhc_wait_ended(h->ctl, STREAM_END_WAIT_MS))
		return rc;
	if (h->tx.depth)
		return uh_tx_heapd_restarted(h);
	if ((rc = reattach(h)) == 0)
		*again = 1;
	return rc;
}

/* uh_ctl_ready past its first check: the session stream has ended. */
static int ctl_lost(uh_heap *h)
{
	if (h->tx.depth)
		return uh_tx_heapd_restarted(h);
	return reattach(h);
}

const struct uh_recovery uh_reattach_recovery = { reattach, ctl_lost, ctl_failed,
						    uh_fork_rebuild };
