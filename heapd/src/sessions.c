/*
 * sessions.c -- attaching clients to the heap and cleaning up after them.
 *
 * A session is a slot of the persistent session table (1..session_cap-1;
 * lock words name slots, so slot 0 means nobody). A writing session also
 * gets a redo log area. The slot, its log area and its token are made in
 * one libpmemobj transaction, so a crash never leaves a log area nobody
 * owns.
 *
 * Reaping (detach, dead client, start-up recovery) runs in this order, and
 * each step is safe to repeat if heapd dies in the middle:
 *  1. a committed log is replayed (replay is idempotent) and its locks
 *     released with a new version; an in-flight one is rolled back;
 *  2. the log is marked IDLE and empty (persisted): from here on a new
 *     start finds nothing to redo;
 *  3. one transaction returns the session's arenas, frees its unused
 *     large regions and its log area, and clears its slot.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "core.h"
#include "logapply.h"

/* ------------------------------------------------------------------ */
/* Process identity: pid plus start time, so a recycled pid is not taken
 * for the client that attached. */

/* starttime (field 22) of /proc/PID/stat and its state letter (field 3);
 * 0 if the process does not exist or /proc cannot tell. */
static uint64_t proc_stat(uint32_t pid, char *state)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* The command name (field 2) may hold spaces and parentheses: fields
	 * are counted from the last ')'. p starts at the blank before field
	 * 3; each step moves it to the blank before the next field, so 19
	 * steps reach the one before starttime, field 22. */
	char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return 0;
	*state = p[2];
	p++;
	for (int field = 3; field < 22 && p; field++)	/* 19 steps */
		p = strchr(p + 1, ' ');
	return p ? strtoull(p + 1, NULL, 10) : 0;
}

uint64_t hd_proc_start(uint32_t pid)
{
	char state;
	return proc_stat(pid, &state);
}

int hd_session_owner_alive(const struct uh_session_ent *e)
{
	if (e->pid == 0 || (kill((pid_t)e->pid, 0) != 0 && errno != EPERM))
		return 0;
	char state = '?';
	uint64_t start = proc_stat(e->pid, &state);
	/* A zombie has exited: its mapping and its blocks are gone. */
	if (state == 'Z' || state == 'X')
		return 0;
	/* Unknown start time (/proc unreadable at attach): trust the pid. */
	return e->proc_start == 0 || start == e->proc_start;
}

/* ------------------------------------------------------------------ */

static uint64_t new_token(void)
{
	uint64_t t = 0;
	/* Bounded: getrandom on a 8-byte buffer returns it whole once the
	 * pool is initialized; EINTR is retried at most a few times. */
	for (int i = 0; i < 8 && t == 0; i++) {
		if (getrandom(&t, sizeof(t), 0) != (ssize_t)sizeof(t))
			t = 0;
	}
	if (t == 0)	/* 0 would look like "no token"; never hand it out */
		t = hd_now_ns() ^ ((uint64_t)getpid() << 32) ^ 0x9e3779b97f4a7c15ull;
	return t;
}

static int64_t free_slot(struct hd *hd)
{
	const struct uh_session_ent *tab = hd_session_tab(hd);
	for (uint32_t i = 1; i < hd->hdr->session_cap; i++) {	/* bounded by session_cap */
		if (tab[i].state == UH_SESS_FREE)
			return i;
	}
	return -1;
}

static void attach_tx(struct hd *hd, uint32_t slot, uint32_t pid, int readonly,
		      struct hd_session_info *out)
{
	struct uh_session_ent *e = &hd_session_tab(hd)[slot];
	uint64_t log_off = 0, log_size = 0;
	if (!readonly) {
		/* Like an arena, the area plus libpmemobj's 16-byte allocation
		 * header fills log_size exactly; the session entry (and so the
		 * client) gets the area's real size. In the pool, or in the
		 * extension when the pool is full (logs.c); aborts the
		 * transaction when both are. */
		log_size = hd->hdr->log_size - HD_PMEMOBJ_ALLOC_HDR;
		log_off = hd_log_room_tx(hd, log_size, 1);
		struct uh_log_hdr lh = { .magic = UH_LOG_MAGIC, .state = UH_LOG_IDLE,
					 .session = slot };
		hd_log_room_write_tx(hd, log_off, &lh, sizeof(lh));
	}
	hd_tx_add(hd, e, sizeof(*e));
	memset(e, 0, sizeof(*e));
	e->state = UH_SESS_ACTIVE;
	e->pid = pid;
	e->token = out->token;
	e->log_off = log_off;
	e->log_size = log_size;
	e->attach_ns = hd_now_ns();
	e->proc_start = hd_proc_start(pid);
	out->session = slot;
	out->log_off = log_off;
	out->log_size = log_size;
}

/* The previous session a re-attaching process names: its slot if it is
 * active, 0 if there is none (reaped already: nothing to recover), -1
 * with err set if it is not this process's. */
static int64_t previous_locked(struct hd *hd, uint32_t pid, uint32_t prev, uint64_t token,
			       char *err, size_t errlen)
{
	if (prev == 0 || prev >= hd->hdr->session_cap ||
	    hd_session_tab(hd)[prev].state != UH_SESS_ACTIVE)
		return 0;
	const struct uh_session_ent *e = &hd_session_tab(hd)[prev];
	if (e->pid != pid || e->token != token) {
		hd_err(err, errlen, UH_EINVAL, "re-attach names session %u, which is not this "
		       "process's (pid %u) or has another token", prev, pid);
		return -1;
	}
	return prev;
}

static void transfer_tx(struct hd *hd, uint32_t from, uint32_t to)
{
	struct uh_arena_ent *dir = hd_arena_dir(hd);
	for (uint32_t i = 0; i < hd->hdr->arena_cap; i++) {	/* bounded by arena_cap */
		if (dir[i].kind == UH_ARENA_UNUSED || dir[i].owner != from)
			continue;
		hd_tx_add(hd, &dir[i].owner, sizeof(dir[i].owner));
		dir[i].owner = to;
	}
}

/* A session killed while it waited for a change (FORMAT.md 8.9) still
 * counts in waiters: take its count back. Whoever clears the bit, the
 * session itself or heapd, takes it, so it is taken once. */
static void forget_waiter(struct hd *hd, uint32_t slot)
{
	if (slot == 0 || slot >= UH_SESSION_CAP)
		return;
	uint64_t bit = 1ull << (slot % 64);
	if (__atomic_fetch_and(&hd->hdr->waiting[slot / 64], ~bit, __ATOMIC_SEQ_CST) & bit)
		__atomic_sub_fetch(&hd->hdr->waiters, 1, __ATOMIC_SEQ_CST);
}

static void release_tx(struct hd *hd, uint32_t slot, struct uh_session_ent *e,
		       struct uh_log_hdr *log);
static void finish_log(struct hd *hd, uint32_t slot, struct uh_log_hdr *log,
		       struct hd_reap_result *r);
static void count_reap(struct hd *hd, const struct hd_reap_result *r, int graceful);

/* Re-attach: the old session's log is recovered as a dead client's, its
 * arenas (with the objects it allocated and has not published) go to the
 * new session, its log and slot are freed. Crash-safe like a reap: the
 * log is IDLE before the one transaction that moves and frees. */
static void reattach_locked(struct hd *hd, uint32_t old, uint32_t now)
{
	struct uh_session_ent *e = &hd_session_tab(hd)[old];
	struct uh_log_hdr *log = hd_session_log_locked(hd, old);
	struct hd_reap_result r;
	memset(&r, 0, sizeof(r));
	if (log)
		finish_log(hd, old, log, &r);
	forget_waiter(hd, old);
	hd_gc_area_move_pins(hd, old, now);
	TX_BEGIN(hd->pop) {
		transfer_tx(hd, old, now);
		release_tx(hd, old, e, log);
	} TX_ONABORT {
		hd_log("error", "reattach_failed", "session=%u reason=%s", old, pmemobj_errormsg());
	} TX_END
	if (hd->inherited && hd->inherited[old]) {
		hd->inherited[old] = 0;
		hd->ninherited--;
	}
	count_reap(hd, &r, 1);
	hd->stats.reattaches++;
	hd_log("info", "reattach", "session=%u previous=%u replayed=%d rolled_back=%d "
	       "locks_released=%llu", now, old, r.replayed, r.rolled_back,
	       (unsigned long long)r.locks_released);
}

/* The session entry and its log in one transaction; the transaction's
 * errno if it aborted (ENOMEM: no room for the log), else 0. */
static int new_session_locked(struct hd *hd, uint32_t slot, uint32_t pid, int readonly,
			      struct hd_session_info *info)
{
	volatile int failed = 0;
	TX_BEGIN(hd->pop) {
		attach_tx(hd, slot, pid, readonly, info);
	} TX_ONABORT {
		failed = pmemobj_tx_errno() ? pmemobj_tx_errno() : ENOMEM;
	} TX_END
	return failed;
}

int hd_session_attach(struct hd *hd, uint32_t pid, int readonly, const char *client,
		      uint32_t prev_session, uint64_t prev_token,
		      struct hd_session_info *out, char *err, size_t errlen)
{
	if (pid == 0)
		return hd_err(err, errlen, UH_EINVAL, "attach: pid 0 is not a process");
	int rc = 0, why = 0, tx_errno;
	struct hd_space_try tried = { 0 };
	pthread_mutex_lock(&hd->mu);
again:	/* a GC cycle a few times at most, or a growth, when the log finds no space */
	hd_reap_inherited_locked(hd);
	int64_t prev = previous_locked(hd, pid, prev_session, prev_token, err, errlen);
	if (prev < 0) {
		rc = UH_EINVAL;
		goto out;
	}
	int64_t slot = free_slot(hd);
	if (slot < 0) {
		rc = hd_err(err, errlen, UH_ENOSPC, "too many sessions: all %u slots are attached",
			    hd->hdr->session_cap - 1);
		goto out;
	}
	struct hd_session_info info = { .token = new_token() };
	if ((tx_errno = new_session_locked(hd, (uint32_t)slot, pid, readonly, &info))) {
		/* Like a lease (arenas.c): a GC cycle may free objects and give
		 * emptied arenas back (FORMAT.md 6.3), hd->mu released while
		 * it runs, so the table may have changed meanwhile; then a
		 * heap that may grow grows (the log goes to the extension). */
		if (hd_make_room_locked(hd, 0, tx_errno, hd->hdr->log_size, &tried, &why, err,
					errlen))
			goto again;
		char a[32];
		rc = why ? why : hd_err(err, errlen, UH_ENOSPC, "heap full: cannot allocate a %s "
					"session log", hd_fmt_bytes(a, sizeof(a),
								     hd->hdr->log_size));
		goto out;
	}
	*out = info;
	hd_gc_area_reset(hd, info.session);
	hd->stats.attaches++;
	if (prev > 0)
		reattach_locked(hd, (uint32_t)prev, info.session);
	char q[160];
	hd_log("info", "attach", "session=%u pid=%u readonly=%d client=%s", info.session, pid,
	       readonly ? 1 : 0, hd_log_quote(q, sizeof(q), client ? client : ""));
out:
	pthread_mutex_unlock(&hd->mu);
	return rc;
}

int hd_session_check(struct hd *hd, uint32_t session, uint64_t token, char *err,
		     size_t errlen)
{
	int rc = 0;
	pthread_mutex_lock(&hd->mu);
	if (session == 0 || session >= hd->hdr->session_cap ||
	    hd_session_tab(hd)[session].state != UH_SESS_ACTIVE ||
	    hd_session_tab(hd)[session].token != token)
		rc = hd_err(err, errlen, UH_EINVAL, "unknown session %u or wrong token", session);
	pthread_mutex_unlock(&hd->mu);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Reaping. */

/* A fresh version for the locks a reaped session releases. The clock is
 * shared with clients (atomic add); it is persisted so versions never go
 * backwards across a crash. */
static uint64_t next_version(struct hd *hd)
{
	uint64_t v = __atomic_add_fetch(&hd->hdr->clock, 1, __ATOMIC_ACQ_REL);
	uh_persist_range(&hd->persist, &hd->hdr->clock, sizeof(hd->hdr->clock));
	return v;
}

void hd_clock_raise(struct hd *hd, uint64_t v)
{
	uint64_t c = __atomic_load_n(&hd->hdr->clock, __ATOMIC_ACQUIRE);
	while (c < v && !__atomic_compare_exchange_n(&hd->hdr->clock, &c, v, 0,
						      __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		;	/* bound: each failure saw the clock move up */
}

uint64_t hd_session_replay_version(struct hd *hd, uint32_t slot)
{
	struct uh_log_hdr *log = hd_session_log_locked(hd, slot);
	if (!log)
		return 0;
	struct uh_log_loc l = hd_log_loc(hd, slot, log);
	return uh_log_is_committed(&l) ? log->version : 0;
}

/* Step 1 and 2 of the reap order above. A COMMITTED log (checksum good)
 * is replayed; an APPLIED one was replayed by its client, which died
 * while releasing: only its locks remain. ACTIVE, or COMMITTED with a
 * torn header, never committed: rolled back. IDLE: nothing in flight
 * (uh_log_finish leaves it alone). */
static void finish_log(struct hd *hd, uint32_t slot, struct uh_log_hdr *log,
		       struct hd_reap_result *r)
{
	struct uh_log_counts c;
	struct uh_log_loc l = hd_log_loc(hd, slot, log);
	memset(&c, 0, sizeof(c));
	int committed = uh_log_is_committed(&l);
	if (committed && uh_log_apply(&l, &hd->persist, &c) != 0)
		/* A bad entry stops the replay; what came before it is
		 * applied. Nothing better can be done with a damaged log;
		 * recovery GC will null references it left dangling. */
		hd_log("error", "log_replay_failed", "session=%u seq=%llu reason=bad_entry", slot,
		       (unsigned long long)log->seq);
	uint32_t state = log->state;
	if (state != UH_LOG_IDLE) {
		int forward = committed || state == UH_LOG_APPLIED;
		/* COMMITTED with a checksum that fails is a torn commit, which
		 * only a power loss leaves: the header reached the media and
		 * some entry lines did not, so entries may be the previous
		 * block's, and an ALLOC among them would name that block's
		 * committed object. Only the locks they name are released
		 * (as for APPLIED); recovery GC frees what the block allocated. */
		if (state == UH_LOG_COMMITTED && !committed)
			log->state = UH_LOG_APPLIED;
		uh_log_finish(&l, slot, forward, next_version(hd), &hd->ix, &c);
		r->replayed = forward;
		r->rolled_back = !forward;
	}
	r->locks_released += c.locks_released;
	log->state = UH_LOG_IDLE;
	log->nentries = 0;
	log->nbytes = 0;
	uh_persist_range(&hd->persist, log, sizeof(*log));
	/* IDLE on the media: no barrier needs to flush this log any more. */
	if (slot < UH_SESSION_CAP)
		__atomic_and_fetch(&hd->hdr->lazy_logs[slot / 64], ~(1ull << (slot % 64)),
			   __ATOMIC_RELEASE);
}

static void release_tx(struct hd *hd, uint32_t slot, struct uh_session_ent *e,
		       struct uh_log_hdr *log)
{
	hd_arenas_release_tx(hd, slot);
	if (log)
		hd_log_extents_free_tx(hd, slot, log);
	if (e->log_off && hd_in_heap(hd, e->log_off, e->log_size))
		hd_log_room_free_tx(hd, e->log_off, e->log_size);
	hd_tx_add(hd, e, sizeof(*e));
	memset(e, 0, sizeof(*e));
}

void hd_session_reap_locked(struct hd *hd, uint32_t slot, struct hd_reap_result *r)
{
	memset(r, 0, sizeof(*r));
	struct uh_session_ent *e = &hd_session_tab(hd)[slot];
	struct uh_log_hdr *log = hd_session_log_locked(hd, slot);
	if (log)
		finish_log(hd, slot, log, r);
	forget_waiter(hd, slot);
	volatile int failed = 0;
	TX_BEGIN(hd->pop) {
		release_tx(hd, slot, e, log);
	} TX_ONABORT {
		/* The slot stays ACTIVE: the next start reaps it again. */
		failed = 1;
		hd_log("error", "reap_failed", "session=%u reason=%s", slot,
		       pmemobj_errormsg());
	} TX_END
	/* Its pins die with it (an active slot keeps them); what its ring
	 * holds goes to a running cycle's next drain (gcfile.c). */
	if (!failed)
		hd_gc_area_reset(hd, slot);
}

static void count_reap(struct hd *hd, const struct hd_reap_result *r, int graceful)
{
	hd->stats.detaches++;
	if (!graceful)
		hd->stats.sessions_reaped++;
	hd->stats.logs_replayed += (uint64_t)r->replayed;
	hd->stats.logs_rolled_back += (uint64_t)r->rolled_back;
	hd->stats.locks_released += r->locks_released;
}

void hd_reap_inherited_locked(struct hd *hd)
{
	for (uint32_t i = 1; hd->ninherited && i < hd->hdr->session_cap; i++) {	/* < cap */
		const struct uh_session_ent *e = &hd_session_tab(hd)[i];
		if (!hd->inherited[i])
			continue;
		if (e->state == UH_SESS_ACTIVE && hd_session_owner_alive(e))
			continue;
		uint32_t pid = e->pid;
		struct hd_reap_result r;
		memset(&r, 0, sizeof(r));
		if (e->state == UH_SESS_ACTIVE)
			hd_session_reap_locked(hd, i, &r);
		hd->inherited[i] = 0;
		hd->ninherited--;
		count_reap(hd, &r, 0);
		hd_log("info", "reap", "session=%u pid=%u inherited=1 replayed=%d rolled_back=%d "
		       "locks_released=%llu", i, pid, r.replayed, r.rolled_back,
		       (unsigned long long)r.locks_released);
	}
}

void hd_session_detach(struct hd *hd, uint32_t session, int graceful)
{
	pthread_mutex_lock(&hd->mu);
	if (hd_session_active_locked(hd, session, NULL, 0) == 0) {
		uint32_t pid = hd_session_tab(hd)[session].pid;
		struct hd_reap_result r;
		hd_session_reap_locked(hd, session, &r);
		count_reap(hd, &r, graceful);
		if (hd->inherited && hd->inherited[session]) {
			hd->inherited[session] = 0;
			hd->ninherited--;
		}
		hd_log("info", graceful ? "detach" : "reap",
		       "session=%u pid=%u replayed=%d rolled_back=%d locks_released=%llu", session,
		       pid, r.replayed, r.rolled_back, (unsigned long long)r.locks_released);
	}
	pthread_mutex_unlock(&hd->mu);
}

void hd_reap_inherited(struct hd *hd)
{
	if (!__atomic_load_n(&hd->ninherited, __ATOMIC_RELAXED))
		return;		/* the common case: no lock taken */
	pthread_mutex_lock(&hd->mu);
	hd_reap_inherited_locked(hd);
	pthread_mutex_unlock(&hd->mu);
}
