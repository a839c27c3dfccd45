/*
 * recovery.c -- what heapd does at start, before it accepts any client:
 *
 *  1. Session logs. Every ACTIVE session slot left by a previous run has
 *     the log chain link its redo pair records made (logs.c), and is
 *     either a client still running (same pid and /proc start time: it
 *     outlived the old heapd and will re-attach) or a dead one, whose log
 *     is replayed (committed) or rolled back exactly as a detach does.
 *  2. Recovery GC (gc.c). Clients still running (FORMAT.md 9) are first
 *     waited for until none is in the middle of a commit (bounded: else
 *     the GC is deferred to a later start); the GC then treats their
 *     arenas as roots and keeps their locks and leases.
 *
 * The arena index is rebuilt before each step that reads it and after
 * each step that may free large regions (reaping, the GC's sweep).
 *
 * Crash safety: both steps are repeatable; a crash in the middle is
 * repaired by doing them again at the next start.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core.h"

static void reap_one(struct hd *hd, uint32_t slot)
{
	struct hd_reap_result r;
	hd_session_reap_locked(hd, slot, &r);
	hd->rec.logs_replayed += (uint64_t)r.replayed;
	hd->rec.logs_discarded += (uint64_t)r.rolled_back;
}

/* A dead session of the previous run, in replay order. */
struct dead_session {
	uint64_t version;	/* of its committed log, 0 if none */
	uint32_t slot;
};

static int dead_cmp(const void *a, const void *b)
{
	const struct dead_session *x = a, *y = b;
	if (x->version != y->version)
		return x->version < y->version ? -1 : 1;
	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

/* Note a session of the previous run that is still alive: it re-attaches. */
static void inherit(struct hd *hd, uint32_t i, const struct uh_session_ent *e)
{
	hd_log("info", "session_alive", "session=%u pid=%u note=will_reattach", i, e->pid);
	if (!hd->inherited)
		hd->inherited = calloc(hd->hdr->session_cap, 1);
	if (hd->inherited) {
		hd->inherited[i] = 1;
		hd->ninherited++;
	}
}

/* Step 1: sessions of the previous run. Dead sessions are reaped in the
 * commit version order of their logs: after a power loss several logs may
 * still read COMMITTED (a commit leaves its log APPLIED without a barrier,
 * FORMAT.md 8.4), and a later block that wrote the same bytes must be
 * replayed after an earlier one. Sets *alive if one of the sessions is
 * still alive (recovery GC must then wait). */
static int recover_sessions(struct hd *hd, int *alive, char *err, size_t errlen)
{
	uint32_t cap = hd->hdr->session_cap, n = 0;
	struct dead_session *dead = calloc(cap, sizeof(*dead));
	uint64_t maxv = 0;

	*alive = 0;
	if (!dead)
		return hd_err(err, errlen, UH_ENOMEM, "out of memory ordering the logs of %s",
			      hd->path);

	for (uint32_t i = 1; i < cap; i++) {	/* bounded by session_cap */
		const struct uh_session_ent *e = &hd_session_tab(hd)[i];
		if (e->state != UH_SESS_ACTIVE)
			continue;
		/* A chain link the previous heapd committed and may not have
		 * written (FORMAT.md 7): made before anyone walks the chain. */
		hd_log_redo_locked(hd, i);
		if (hd_session_owner_alive(e)) {
			inherit(hd, i, e);
			*alive = 1;
			continue;
		}
		uint64_t v = hd_session_replay_version(hd, i);
		if (v > maxv)
			maxv = v;
		dead[n++] = (struct dead_session){ v, i };
	}
	/* Locks released by the replays get versions above the logs'. */
	hd_clock_raise(hd, maxv);
	qsort(dead, n, sizeof(*dead), dead_cmp);
	for (uint32_t k = 0; k < n; k++)	/* bound: n dead sessions */
		reap_one(hd, dead[k].slot);
	free(dead);
	return 0;
}

#define HD_QUIET_WAIT_MS 10000

/* No client of a previous heapd is between COMMITTED and IDLE. They saw
 * heapd_starts move (hd_open bumped it) or will before their next commit,
 * so none starts another one. */
static int live_clients_quiet(struct hd *hd)
{
	uint64_t t0 = hd_mono_ns();

	/* bound: HD_QUIET_WAIT_MS of 1 ms sleeps */
	while (hd_mono_ns() - t0 < (uint64_t)HD_QUIET_WAIT_MS * 1000000ull) {
		int busy = 0;
		for (uint32_t i = 1; i < hd->hdr->session_cap && !busy; i++) {	/* < cap */
			if (!hd->inherited || !hd->inherited[i])
				continue;
			const struct uh_log_hdr *log = hd_session_log_locked(hd, i);
			uint32_t st = log ? __atomic_load_n(&log->state, __ATOMIC_ACQUIRE) : 0;
			busy = st == UH_LOG_COMMITTED || st == UH_LOG_APPLIED;
		}
		if (!busy)
			return 1;
		struct timespec ts = { 0, 1000000L };
		nanosleep(&ts, NULL);
	}
	hd_log("warn", "gc_deferred", "reason=\"a client of the previous heapd stayed in a "
	       "commit for %d ms\"", HD_QUIET_WAIT_MS);
	return 0;
}

static int rebuild_index(struct hd *hd, char *err, size_t errlen)
{
	if (uh_arena_index_build(&hd->ix) != 0)
		return hd_err(err, errlen, UH_ENOMEM, "out of memory indexing the arenas of %s",
			      hd->path);
	return 0;
}

int hd_recover_logs_locked(struct hd *hd, char *err, size_t errlen)
{
	memset(&hd->rec, 0, sizeof(hd->rec));
	hd->rec_t0 = hd_mono_ns();
	int rc = rebuild_index(hd, err, errlen);
	if (rc)
		return rc;
	int alive;
	if ((rc = recover_sessions(hd, &alive, err, errlen)) != 0)
		return rc;
	hd->rec_alive = alive;
	/* Reaping may have freed large regions: index what is left. */
	return rebuild_index(hd, err, errlen);
}

/* ------------------------------------------------------------------ */
/* Where the heap is served (FORMAT.md 9.4): the boot, the file. */

#define BOOT_ID_PATH "/proc/sys/kernel/random/boot_id"

/* uh_fnv1a64 of the kernel's boot id; $UNIHEAP_BOOT_ID stands in for it
 * (a test that puts a power-loss image in place of a heap file says so
 * the way a reboot would); 0 if neither can be read. */
static uint64_t boot_hash(void)
{
	char buf[128] = "";
	const char *id = getenv("UNIHEAP_BOOT_ID");
	if (!id || !id[0]) {
		FILE *f = fopen(BOOT_ID_PATH, "r");
		size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
		if (f)
			fclose(f);
		buf[n] = '\0';
		id = buf;
	}
	return id[0] ? uh_fnv1a64(id, strlen(id), UH_FNV_INIT) : 0;
}

struct served {
	uint64_t boot, dev, ino;
};

/* Where heapd serves now; all zero if the boot id or the file's identity
 * cannot be read (then no heap matches it). */
static struct served served_now(struct hd *hd)
{
	struct stat st;
	struct served s = { 0, 0, 0 };
	uint64_t boot = boot_hash();
	if (boot && stat(hd->path, &st) == 0)
		s = (struct served){ boot, (uint64_t)st.st_dev, (uint64_t)st.st_ino };
	return s;
}

/* Steps 2-4 may be left to an online cycle (FORMAT.md 9.4). */
static int may_skip_mark(struct hd *hd, const struct served *now, const char **why)
{
	const struct uh_hdr *h = hd->hdr;
	if (!now->boot) {
		*why = "boot id or heap file identity unknown";
		return 0;
	}
	if (h->run_boot != now->boot || h->run_dev != now->dev || h->run_ino != now->ino) {
		*why = h->run_boot ? "not served since this boot" : "never served by this heapd";
		return 0;
	}
	if (hd->rec_alive && !hd->gcf_reused) {
		*why = "clients of the previous heapd run without their GC file";
		return 0;
	}
	if (!hd->gcf) {
		*why = "no GC file";
		return 0;
	}
	return 1;
}

static void stamp_served(struct hd *hd, const struct served *now)
{
	struct uh_hdr *h = hd->hdr;
	h->run_boot = now->boot;
	h->run_dev = now->dev;
	h->run_ino = now->ino;
	uh_persist_range(&hd->persist, &h->run_boot, 3 * sizeof(uint64_t));
}

static int full_gc(struct hd *hd, char *err, size_t errlen)
{
	/* Clients still running may be committing: wait (bounded) until none
	 * is (reattach.c in libuniheap says why that is enough); a client
	 * stuck mid-commit defers the GC to a later start. */
	if (hd->rec_alive)
		hd->rec.gc_deferred = !live_clients_quiet(hd);
	if (hd->rec.gc_deferred)
		return 0;
	int rc = hd_recovery_gc_locked(hd, err, errlen);
	if (!rc)
		rc = rebuild_index(hd, err, errlen);	/* GC may have freed regions too */
	return rc;
}

int hd_recover_gc_locked(struct hd *hd, int mode, char *err, size_t errlen)
{
	const char *why = "--recovery-gc full";
	struct served now = served_now(hd);
	int rc = 0;
	if (mode != HD_RECOVERY_FULL && may_skip_mark(hd, &now, &why)) {
		hd->rec.gc_online = 1;
		hd->rec.gc_pending = 1;
		why = "same boot and file";
	} else {
		rc = full_gc(hd, err, errlen);
	}
	hd->rec.duration_us = (hd_mono_ns() - hd->rec_t0) / 1000u;
	if (rc)
		return rc;	/* the caller reports err: one line, not two */
	stamp_served(hd, &now);
	hd_log("info", "recovery",
	       "logs_replayed=%llu logs_discarded=%llu live=%llu freed=%llu nulled=%llu "
	       "locks_cleared=%llu gc_deferred=%d gc=%s reason=\"%s\" ms=%llu",
	       (unsigned long long)hd->rec.logs_replayed,
	       (unsigned long long)hd->rec.logs_discarded,
	       (unsigned long long)hd->rec.live_objects,
	       (unsigned long long)hd->rec.freed_objects,
	       (unsigned long long)hd->rec.nulled_refs,
	       (unsigned long long)hd->rec.locks_cleared, hd->rec.gc_deferred,
	       hd->rec.gc_online ? "online" : "full", why,
	       (unsigned long long)(hd->rec.duration_us / 1000u));
	return 0;
}
