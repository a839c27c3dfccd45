/*
 * collector.c -- heapd's online GC (FORMAT.md 9.3): a thread that runs
 * cycles while clients read and write, the automatic trigger, and the Gc
 * request. A cycle:
 *   1. gc_v0 = ++clock; gc_state = (c+1, MARK); full fence.
 *   2. Handshake H1: each active session is out of its busy section or has
 *      seen MARK (bounded: else the cycle is given up).
 *   3. A snapshot of the arena index; side mark bits for its arenas
 *      (gc.c's online mark, which never writes the heap). Grey roots: the
 *      root map, every session's pins [0, pin_hwm) and nursery, every ring.
 *   4-5. Mark and drain the rings until the stack and every ring are
 *      empty at once. gc_state = (c+1, SWEEP); handshake H2: no session is
 *      still in a busy section that loaded MARK (it may still push the
 *      old values it overwrites); then the rings are drained and marked
 *      once more. A session that ends meanwhile leaves what its ring
 *      holds to the next drain (hd->gc_left). A ring that overflowed, or
 *      a dead session's log replayed meanwhile (that replay has no
 *      barrier), gives the cycle up.
 *   6. Sweep in batches, with the Dekker protocol against uh_pin: take
 *      the lock of each candidate, fence, scan every session's pins,
 *      rescue what a pin holds, free the rest. Large regions go back to
 *      the pool, and so, after the sweep, do small arenas nobody leases
 *      that hold no object any more (FORMAT.md 6.3).
 *   7. gc_state = (c+1, IDLE); the cycle's figures are kept (last 16).
 * Objects whose lock word version is >= gc_v0 were allocated or written
 * after the mark began: never swept by that cycle.
 *
 * Without a GC file (hd->gcf NULL) clients cannot take part: a cycle then
 * runs only while no client is attached (else it is given up).
 *
 * Two threads run cycles, one at a time (col->busy): the background one,
 * at a lower priority (nice --gc-nice, default 10), runs what nobody waits
 * for: the automatic trigger's cycles, heapctl gc's, recovery's; the
 * urgent one, at heapd's own priority, runs a cycle a lease or an attach
 * that found no space asked for (hd->gc_full). A collector that competes
 * with clients for the cores at their priority takes them from the
 * clients (measured: YCSB A from Java on two cores with cycles back to
 * back, 0.65-0.78x the throughput without at nice 0, 0.93-0.98x at nice
 * 10); but a client waiting for space must not wait on a collector that
 * the other clients starve, and an unprivileged thread cannot raise its
 * priority again once lowered, hence a thread of each kind. A request
 * made while a cycle runs (a failed lease's, heapctl gc's) asks for the
 * next one: the running cycle marks from the roots of its start, so it
 * may keep garbage made since, which the requester wants gone.
 *
 * gc_session: heapd's own session slot (attached with heapd's pid at
 * start, its log left ACTIVE with no entries), named in uh_hdr.gc_session.
 * The sweep locks what it frees with that slot's lock words; a reader that
 * meets such a lock reads in place (the log is ACTIVE: nothing to apply)
 * and then sees the object freed. A restarted heapd reaps the old slot
 * like any dead session's.
 *
 * Locks: hd->mu is held only for short steps (the session table, the
 * index snapshot and class digest, the rings, large frees), never while
 * marking. col->mu guards the request and the figures; hd->mu may be held
 * when it is taken, never the other way round.
 *
 * Test hooks: UNIHEAP_GC_STOP_AT=mark|sweep makes the collector stop at
 * that step of its first cycle (after greying the roots; after the first
 * batch's valid bits are cleared and persisted, its locks still held) and
 * wait there until heapd stops, so a test can kill heapd mid-cycle.
 * UNIHEAP_GC_HOLD=NAME holds the first cycle after it greyed its roots
 * until the file NAME.go exists beside the heap (hold).
 * UNIHEAP_GC_CRASH_AT_BARRIER=k SIGKILLs heapd right before the k-th
 * crash point of its first cycle. The crash points of a cycle are its
 * persist barriers (the clock's at step 1 and at each batch, each batch's
 * valid bits) and the start of each large region's free (a libpmemobj
 * transaction, whose inside the power-loss tests cut); every cycle logs
 * how many it passed (barriers=N in its gc_cycle line).
 */
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "u64.h"

#define GC_TICK_NS 100000000ull		/* the trigger's timer: 100 ms */
#define GC_HANDSHAKE_NS 1000000000ull	/* a session may take 1 s to acknowledge */
#define GC_FULL_WAIT_NS 30000000000ull	/* a failed lease waits 30 s at most */
#define GC_BATCH 4096u
#define GC_MARK_SLICE 4096u		/* objects marked between two ring drains */

/* A thread that runs cycles (the file's comment: background, urgent). */
struct col_thread {
	struct hd_collector *col;
	pthread_t thread;
	int urgent;
	int started;			/* pthread_create succeeded */
};

struct hd_collector {
	struct hd *hd;
	struct col_thread bg, urgent;
	pthread_mutex_t mu;
	pthread_cond_t cv;		/* requests, the end of a cycle, stop */
	int stop;
	int requested;
	int req_urgent;			/* the request is a lease's or an attach's */
	int busy;			/* a thread runs a cycle */
	char req_trigger[32];
	uint64_t started, finished;	/* cycles begun, ended */
	struct hd_gc_cycle cur;		/* the one running (cur.running) */
	struct hd_gc_cycle hist[HD_GC_RECENT];
	uint32_t nhist, hist_next;
	struct hd_gc_totals totals;	/* of every cycle ended */
	uint32_t session;		/* gc_session */
	uint64_t used_after;		/* slot bytes in use after the last cycle (atomic) */
	int stop_at;			/* test hook: 0, 1 mark, 2 sweep */
	const char *hold;		/* test hook: NULL, or the hold's file name */
	/* Recovery left its mark to this collector (FORMAT.md 9.4): cycles
	 * with the trigger "recovery" run until one is done, whose figures
	 * become hd->rec's. Written under col->mu. */
	int recovery_pending;
	int serving;			/* hd_gc_serving was called */
	int want_space;			/* a lease or attach found no space: the next
					 * sweep's end frees the empty arenas */
	uint64_t crash_at;		/* test hook: 0, or the crash point k */
};

/* One cycle's working state (collector thread only). */
struct cycle {
	struct hd *hd;
	struct hd_collector *col;
	struct hd_gc_cycle *fig;
	uint64_t state, v0;
	uint64_t replayed0;		/* hd->stats.logs_replayed at step 1 */
	uint32_t *sess;			/* active client sessions */
	uint32_t nsess;
	struct uh_arena_index snap;
	struct gc *mark;
	/* Ring entries consumed before the mark existed (H1, the snapshot):
	 * greyed as soon as it does, so that no client waits for room in
	 * its ring while heapd waits for H1 (or is descheduled in it). */
	struct u64vec early;
	const char *why;		/* set: the cycle is given up */
	uint64_t barriers;		/* crash points passed (test hook, gc_cycle line) */
};

static uint64_t used_bytes_locked(struct hd *hd);
static int drain_rings(struct cycle *cy, uint64_t *got);

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };
	nanosleep(&ts, NULL);
}

/* A crash point of the cycle (cy NULL: outside a cycle, none). The hook
 * kills heapd at the k-th of its first cycle, as a crash would: every
 * store before it is in the page cache, nothing after it happened. */
static void crash_point(struct cycle *cy)
{
	if (!cy)
		return;
	if (++cy->barriers == cy->col->crash_at && cy->col->finished == 0) {
		hd_log("info", "gc_crash_at_barrier", "barrier=%llu",
		       (unsigned long long)cy->barriers);
		kill(getpid(), SIGKILL);
	}
}

static uint64_t next_version(struct hd *hd, struct cycle *cy)
{
	uint64_t v = __atomic_add_fetch(&hd->hdr->clock, 1, __ATOMIC_ACQ_REL);
	hd->persist.flush(hd->persist.ctx, &hd->hdr->clock, sizeof(hd->hdr->clock));
	crash_point(cy);
	hd->persist.drain(hd->persist.ctx);
	return v;
}

/* The GC file's mark_begun (common/gcfile.h): 0 before a cycle's MARK is
 * stored, the cycle once its H1 is over. */
static void set_mark_begun(struct hd *hd, uint64_t cycle)
{
	if (hd->gcf)
		__atomic_store_n(&((struct uh_gc_filehdr *)hd->gcf)->mark_begun, cycle,
				 __ATOMIC_SEQ_CST);
}

static void set_state(struct hd *hd, uint64_t state)
{
	__atomic_store_n(&hd->hdr->gc_state, state, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static int stopping(struct hd_collector *col)
{
	return __atomic_load_n(&col->stop, __ATOMIC_ACQUIRE);
}

/* ------------------------------------------------------------------ */
/* Sessions. */

/* The active client sessions (not heapd's own), copied under hd->mu. */
static int read_sessions(struct cycle *cy)
{
	struct hd *hd = cy->hd;
	pthread_mutex_lock(&hd->mu);
	uint32_t cap = hd->hdr->session_cap, n = 0;
	uint32_t *v = realloc(cy->sess, (size_t)cap * sizeof(*v));
	if (v) {
		const struct uh_session_ent *tab = hd_session_tab(hd);
		for (uint32_t i = 1; i < cap; i++)	/* bounded by session_cap */
			if (tab[i].state == UH_SESS_ACTIVE && i != cy->col->session)
				v[n++] = i;
		cy->sess = v;
	}
	cy->nsess = n;
	pthread_mutex_unlock(&hd->mu);
	return v ? 0 : UH_ENOMEM;
}

/* Wait until every session s is out of its busy section or, if
 * want_seen, has seen the current state; with !want_seen, until none is
 * busy in a section that loaded `stale`. Bounded by GC_HANDSHAKE_NS per
 * session. Returns 0, or -1 if one did not answer (or, waiting, the
 * cycle was given up). The rings are drained while it waits (into
 * cy->early in H1): a section that loaded MARK may be waiting for room
 * in its full ring, which only this thread makes. */
static int handshake(struct cycle *cy, uint64_t stale, int want_seen)
{
	for (uint32_t k = 0; k < cy->nsess; k++) {	/* bounded by the sessions */
		struct uh_gc_sess *gs = hd_gc_sess(cy->hd, cy->sess[k]);
		uint64_t t0 = hd_mono_ns(), spins = 0, got;
		for (;;) {	/* bounded by GC_HANDSHAKE_NS */
			uint32_t busy = __atomic_load_n(&gs->busy, __ATOMIC_ACQUIRE);
			uint64_t seen = __atomic_load_n(&gs->seen, __ATOMIC_ACQUIRE);
			if (!busy || (want_seen ? seen == cy->state : seen != stale))
				break;
			if (hd_mono_ns() - t0 > GC_HANDSHAKE_NS)
				return -1;
			if (drain_rings(cy, &got) || cy->why)
				return -1;
			if (++spins < 64)
				sched_yield();
			else
				sleep_ns(20000);
		}
		uint64_t dt = hd_mono_ns() - t0;
		if (dt > cy->fig->max_handshake_ns)
			cy->fig->max_handshake_ns = dt;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Mark. */

/* Grey every pin of every active session: entries [0, pin_hwm) that hold
 * a reference (even, nonzero). */
static int grey_pins(struct cycle *cy)
{
	int rc = 0;
	for (uint32_t k = 0; cy->hd->gcf && k < cy->nsess && !rc; k++) {
		struct uh_gc_sess *gs = hd_gc_sess(cy->hd, cy->sess[k]);
		const uint64_t *pins = hd_gc_pins(cy->hd, cy->sess[k]);
		uint64_t hwm = __atomic_load_n(&gs->pin_hwm, __ATOMIC_ACQUIRE);
		if (hwm > UH_GC_PIN_CAP)
			hwm = UH_GC_PIN_CAP;
		for (uint64_t i = 0; i < hwm && !rc; i++) {	/* bounded by UH_GC_PIN_CAP */
			uint64_t e = __atomic_load_n(&pins[i], __ATOMIC_ACQUIRE);
			if (e && !(e & 1))
				rc = hd_mark_grey(cy->mark, e);
		}
		const uint64_t *nur = hd_gc_nursery(cy->hd, cy->sess[k]);
		for (uint32_t i = 0; i < UH_GC_NURSERY && !rc; i++) {	/* UH_GC_NURSERY */
			uint64_t e = __atomic_load_n(&nur[i], __ATOMIC_ACQUIRE);
			if (e && !(e & 1))
				rc = hd_mark_grey(cy->mark, e);
		}
	}
	return rc;
}

/* Consume every ring, under hd->mu (a slot changing hands zeroes its
 * area, tail included: heapd must not write a stale tail over that).
 * *got = entries consumed: greyed, or, before the mark exists, kept in
 * cy->early for it. A ring that overflowed gives the cycle up. */
static int drain_rings(struct cycle *cy, uint64_t *got)
{
	struct hd *hd = cy->hd;
	int rc = 0;
	*got = 0;
	if (!hd->gcf)
		return 0;
	pthread_mutex_lock(&hd->mu);
	const struct uh_session_ent *tab = hd_session_tab(hd);
	for (uint32_t s = 1; s < hd->hdr->session_cap && !rc; s++) {	/* bounded by cap */
		if (tab[s].state != UH_SESS_ACTIVE || s == cy->col->session)
			continue;
		struct uh_gc_sess *gs = hd_gc_sess(hd, s);
		const uint64_t *ring = hd_gc_ring(hd, s);
		uint64_t head, tail;
		const char *lost = hd_gc_ring_lost(gs, uh_gc_cycle(cy->state), &head, &tail);
		if (lost)	/* skip what was lost: the cycle is given up */
			cy->why = lost;
		for (; tail < head && !rc && !cy->why; tail++) {	/* <= UH_GC_RING_CAP */
			uint64_t e = ring[tail % UH_GC_RING_CAP];
			rc = cy->mark ? hd_mark_grey(cy->mark, e) : u64vec_push(&cy->early, e);
			(*got)++;
		}
		__atomic_store_n(&gs->tail, tail, __ATOMIC_RELEASE);
	}
	/* What sessions that ended during this cycle left (gcfile.c). */
	if (hd->gc_left_lost == uh_gc_cycle(cy->state) && !cy->why)
		cy->why = "given up: a session that ended had dropped grey references";
	for (size_t i = 0; i < hd->gc_left.n && !rc; i++) {	/* <= ring cap per ended session */
		rc = cy->mark ? hd_mark_grey(cy->mark, hd->gc_left.v[i])
			      : u64vec_push(&cy->early, hd->gc_left.v[i]);
		(*got)++;
	}
	hd->gc_left.n = 0;
	pthread_mutex_unlock(&hd->mu);
	return rc;
}

/* Mark and drain until both the stack and every ring are empty at once.
 * The rings are drained every GC_MARK_SLICE objects (a fraction of a ms),
 * so that a client whose ring fills during a long mark waits that long,
 * not the mark. */
static int mark_until_quiet(struct cycle *cy)
{
	uint64_t got;
	int rc, more;
	do {	/* ends: each round marks new objects or finds the rings empty */
		if ((rc = hd_mark_drain(cy->mark, GC_MARK_SLICE, &more)) ||
		    (rc = drain_rings(cy, &got)))
			return rc;
		if (stopping(cy->col))
			cy->why = "given up: heapd is stopping";
	} while ((more || got > 0) && !cy->why);
	return 0;
}

/* Test hook UNIHEAP_GC_HOLD=NAME: the first cycle, once its roots are
 * grey and before it scans anything, creates NAME.in in the heap file's
 * directory and waits until NAME.go exists there (at most 60 s, or until
 * heapd stops), so that a test can move references and end sessions
 * while the cycle marks. */
static void hold(struct cycle *cy)
{
	const char *name = cy->col->hold, *path = cy->hd->path;
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path) : 1;
	char in[4096], go[4096];
	if (!name || cy->col->finished != 0)
		return;
	snprintf(in, sizeof(in), "%.*s/%s.in", dirlen, slash ? path : ".", name);
	snprintf(go, sizeof(go), "%.*s/%s.go", dirlen, slash ? path : ".", name);
	FILE *f = fopen(in, "w");
	if (f)
		fclose(f);
	hd_log("info", "gc_held", "cycle=%llu", (unsigned long long)uh_gc_cycle(cy->state));
	for (int i = 0; i < 6000 && access(go, F_OK) != 0 && !stopping(cy->col); i++)
		sleep_ns(10000000);	/* bound: 6000 x 10 ms */
}

/* Steps 1 to 5. Leaves cy->why set when the cycle is given up. */
static void mark_phase(struct cycle *cy)
{
	struct hd *hd = cy->hd;
	uint64_t t0 = hd_mono_ns();
	if (read_sessions(cy)) {
		cy->why = "given up: out of memory";
		return;
	}
	if (!hd->gcf && cy->nsess > 0) {
		cy->why = "given up: clients are attached and there is no GC file";
		return;
	}
	pthread_mutex_lock(&hd->mu);
	cy->replayed0 = hd->stats.logs_replayed;
	hd->gc_left.n = 0;	/* an earlier cycle's */
	hd->gc_left_lost = 0;
	uint64_t c = uh_gc_cycle(hd->hdr->gc_state) + 1;
	set_mark_begun(hd, 0);
	cy->v0 = next_version(hd, cy);
	__atomic_store_n(&hd->hdr->gc_v0, cy->v0, __ATOMIC_SEQ_CST);
	cy->state = uh_gc_state_make(c, UH_GC_MARK);
	set_state(hd, cy->state);
	cy->fig->cycle = c;
	cy->fig->phase = UH_GC_MARK;
	pthread_mutex_unlock(&hd->mu);
	/* Sessions attached from here on load MARK in their first busy
	 * section; those listed before must acknowledge it. */
	if (read_sessions(cy) || handshake(cy, 0, 1)) {
		cy->why = "given up: a session did not acknowledge the mark";
		return;
	}
	/* Every session pushes now: what a client allocates from here on is
	 * on no path the mark must follow (gcring.c, uh_gc_note_new). */
	set_mark_begun(hd, c);
	pthread_mutex_lock(&hd->mu);
	uh_arena_index_init(&cy->snap, hd->base, hd->heap_size, hd->hdr);
	if (uh_arena_index_build(&cy->snap) == 0)
		cy->mark = hd_mark_new_locked(hd, &cy->snap);
	pthread_mutex_unlock(&hd->mu);
	if (!cy->mark) {
		cy->why = "given up: out of memory";
		return;
	}
	int rc = hd_mark_grey(cy->mark, hd->hdr->rootmap_off);
	if (!rc)
		rc = grey_pins(cy);
	for (size_t i = 0; i < cy->early.n && !rc; i++)	/* what H1 drained */
		rc = hd_mark_grey(cy->mark, cy->early.v[i]);
	if (cy->col->stop_at == 1) {
		hd_log("info", "gc_stopped_at", "step=mark cycle=%llu", (unsigned long long)c);
		while (!stopping(cy->col))	/* test hook: until heapd stops or dies */
			sleep_ns(GC_TICK_NS);
	}
	if (!rc && !cy->why)
		hold(cy);
	if (!rc)
		rc = mark_until_quiet(cy);
	if (!rc && !cy->why) {
		/* From SWEEP on, busy sections push nothing; wait for those that
		 * loaded MARK, then take what they pushed. */
		set_state(hd, uh_gc_state_make(c, UH_GC_SWEEP));
		cy->fig->phase = UH_GC_SWEEP;
		if ((read_sessions(cy) || handshake(cy, cy->state, 0)) && !cy->why)
			cy->why = "given up: a session stayed in a busy section";
		else
			rc = mark_until_quiet(cy);
	}
	if (rc)
		cy->why = "given up: out of memory marking";
	pthread_mutex_lock(&hd->mu);
	if (!cy->why && hd->stats.logs_replayed != cy->replayed0)
		cy->why = "given up: a dead session's log was replayed during the mark";
	pthread_mutex_unlock(&hd->mu);
	cy->fig->marked = hd_mark_live(cy->mark);
	cy->fig->mark_ns = hd_mono_ns() - t0;
}

/* ------------------------------------------------------------------ */
/* Sweep. */

struct cand {
	uint64_t off;
	uint64_t lock;		/* the unlocked word it had */
	uint32_t word;		/* its class word */
	uint32_t span;		/* in the snapshot */
	uint32_t slot;
	int rescued;
};

struct batch {
	struct cand v[GC_BATCH];
	uint32_t n;
};

static int cand_cmp(const void *key, const void *elem)
{
	uint64_t off = *(const uint64_t *)key, o = ((const struct cand *)elem)->off;
	return off < o ? -1 : off > o;
}

static void rescue(struct batch *b, uint64_t e)
{
	if (!e || (e & 1))
		return;
	uint64_t off = UH_REF_OFFSET(e);
	struct cand *c = bsearch(&off, b->v, b->n, sizeof(*c), cand_cmp);
	if (c)
		c->rescued = 1;
}

/* A pin, or a nursery entry, names a candidate: it is rescued. The batch is sorted by offset
 * (spans are in address order, slots in order inside each). */
static void scan_pins(struct cycle *cy, struct batch *b)
{
	for (uint32_t k = 0; cy->hd->gcf && k < cy->nsess; k++) {	/* bounded */
		struct uh_gc_sess *gs = hd_gc_sess(cy->hd, cy->sess[k]);
		const uint64_t *pins = hd_gc_pins(cy->hd, cy->sess[k]);
		uint64_t hwm = __atomic_load_n(&gs->pin_hwm, __ATOMIC_ACQUIRE);
		if (hwm > UH_GC_PIN_CAP)
			hwm = UH_GC_PIN_CAP;
		for (uint64_t i = 0; i < hwm; i++)	/* bounded by UH_GC_PIN_CAP */
			rescue(b, __atomic_load_n(&pins[i], __ATOMIC_ACQUIRE));
		const uint64_t *nur = hd_gc_nursery(cy->hd, cy->sess[k]);
		for (uint32_t i = 0; i < UH_GC_NURSERY; i++)	/* UH_GC_NURSERY */
			rescue(b, __atomic_load_n(&nur[i], __ATOMIC_ACQUIRE));
	}
}

/* Free a large object's region (its valid bit is clear already). */
static void free_large(struct cycle *cy, const struct uh_arena_span *s)
{
	struct hd *hd = cy->hd;
	pthread_mutex_lock(&hd->mu);
	const struct uh_arena_hdr *ah = (const struct uh_arena_hdr *)(hd->base + s->arena_off);
	uint32_t idx = (uint32_t)ah->dir_index;
	if (ah->magic == UH_ARENA_MAGIC && hd_arena_hdr_ok(hd, idx) == ah &&
	    hd_arena_dir(hd)[idx].kind == UH_ARENA_LARGE && hd_large_free_locked(hd, idx) == 0)
		uh_arena_index_build(&hd->ix);	/* a stale span must never match */
	pthread_mutex_unlock(&hd->mu);
}

/* Where the batch's locks are (uh_hdr.gc_sweep_lo/hi, FORMAT.md 9.4):
 * first: the batch starts at off (or, with off and end 0, has ended);
 * end: one past the object about to be locked. Stored before the lock is taken, so that a
 * heapd that dies holding it left its range behind. */
static void sweep_range(struct hd *hd, int first, uint64_t off, uint64_t end)
{
	if (first)
		__atomic_store_n(&hd->hdr->gc_sweep_lo, off, __ATOMIC_RELAXED);
	__atomic_store_n(&hd->hdr->gc_sweep_hi, end, __ATOMIC_SEQ_CST);
}

/* Step 6 for one batch of locked candidates. */
static void sweep_batch(struct cycle *cy, struct batch *b)
{
	struct hd *hd = cy->hd;
	if (b->n == 0)
		return;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);	/* our locks, then their pins */
	if (read_sessions(cy) == 0)
		scan_pins(cy, b);
	else
		for (uint32_t i = 0; i < b->n; i++)
			b->v[i].rescued = 1;	/* cannot tell: keep all */
	for (uint32_t i = 0; i < b->n; i++) {	/* <= GC_BATCH */
		struct cand *c = &b->v[i];
		struct uh_objhdr *oh = (struct uh_objhdr *)(hd->base + c->off);
		if (c->rescued || __atomic_load_n(&oh->class_word, __ATOMIC_ACQUIRE) != c->word ||
		    !(__atomic_load_n(&oh->size, __ATOMIC_ACQUIRE) & UH_OBJ_VALID)) {
			c->rescued = 1;
			continue;
		}
		__atomic_and_fetch(&oh->size, ~UH_OBJ_VALID, __ATOMIC_ACQ_REL);
		hd->persist.flush(hd->persist.ctx, &oh->size, sizeof(oh->size));
	}
	crash_point(cy);
	hd->persist.drain(hd->persist.ctx);
	if (cy->col->stop_at == 2) {
		hd_log("info", "gc_stopped_at", "step=sweep cycle=%llu candidates=%u",
		       (unsigned long long)cy->fig->cycle, b->n);
		while (!stopping(cy->col))	/* test hook: until heapd stops or dies */
			sleep_ns(GC_TICK_NS);
	}
	uint64_t v = next_version(hd, cy);
	for (uint32_t i = 0; i < b->n; i++) {	/* <= GC_BATCH */
		struct cand *c = &b->v[i];
		struct uh_objhdr *oh = (struct uh_objhdr *)(hd->base + c->off);
		const struct uh_arena_span *s = &cy->snap.v[c->span];
		__atomic_store_n(&oh->lock, v, __ATOMIC_RELEASE);
		if (c->rescued) {
			cy->fig->rescued++;
			continue;
		}
		cy->fig->freed++;
		cy->fig->bytes_freed += s->slot_size;
		if (s->slot_size > UH_SMALL_MAX) {	/* a large object's region */
			crash_point(cy);
			free_large(cy, s);
		} else {
			uh_bitmap_clear(uh_arena_bitmap(hd->base, s->arena_off), c->slot);
		}
	}
	b->n = 0;
	sweep_range(hd, 1, 0, 0);	/* no lock of ours is left */
}

/* Take slot's lock if its object is a candidate: allocated (bit set),
 * unmarked, valid, unlocked with a version older than the mark. */
static void consider(struct cycle *cy, struct batch *b, uint32_t span, uint32_t slot)
{
	const struct uh_arena_span *s = &cy->snap.v[span];
	uint64_t off = s->first_slot + (uint64_t)slot * s->slot_size;
	struct uh_objhdr *oh = (struct uh_objhdr *)(cy->hd->base + off);
	if (!(__atomic_load_n(&oh->size, __ATOMIC_ACQUIRE) & UH_OBJ_VALID))
		return;
	uint64_t w = __atomic_load_n(&oh->lock, __ATOMIC_ACQUIRE);
	uint32_t word = __atomic_load_n(&oh->class_word, __ATOMIC_ACQUIRE);
	if (uh_lock_is_locked(w) || w >= cy->v0)
		return;
	sweep_range(cy->hd, b->n == 0, off, off + s->slot_size);
	uint64_t locked = uh_lock_word(cy->col->session, w);
	if (!__atomic_compare_exchange_n(&oh->lock, &w, locked, 0, __ATOMIC_SEQ_CST,
					 __ATOMIC_RELAXED))
		return;	/* written meanwhile: not this cycle's */
	b->v[b->n++] = (struct cand){ off, w, word, span, slot, 0 };
}

/* consider() for a large region of the snapshot, under hd->mu and only
 * while its directory entry still names it: since the mark began, its
 * object may have been freed and the region given back (a client's
 * ReturnArena, a session reaped), and the memory be another arena's now,
 * whose bitmap words must never be taken for a lock word. Large regions
 * are freed under hd->mu; small arenas only by this thread, after the
 * sweep (FORMAT.md 6.3). The root map record's region is one of these. */
static void consider_large(struct cycle *cy, struct batch *b, uint32_t span)
{
	struct hd *hd = cy->hd;
	const struct uh_arena_span *s = &cy->snap.v[span];
	const struct uh_arena_ent *e = &hd_arena_dir(hd)[s->dir_index];
	pthread_mutex_lock(&hd->mu);
	if (e->kind == UH_ARENA_LARGE && e->off == s->arena_off && e->nslots == 1 &&
	    e->slot_size == s->slot_size &&
	    uh_bitmap_test(uh_arena_bitmap(hd->base, s->arena_off), 0) &&
	    !hd_mark_test(cy->mark, span, 0))
		consider(cy, b, span, 0);
	pthread_mutex_unlock(&hd->mu);
}

static void sweep_phase(struct cycle *cy)
{
	uint64_t t0 = hd_mono_ns();
	struct batch *b = calloc(1, sizeof(*b));
	if (!b) {
		cy->why = "given up: out of memory sweeping";
		return;
	}
	for (uint32_t i = 0; i < cy->snap.n; i++) {	/* bounded by the snapshot */
		const struct uh_arena_span *s = &cy->snap.v[i];
		const uint64_t *bm = uh_arena_bitmap(cy->hd->base, s->arena_off);
		if (s->nslots == 1)	/* a large region (small arenas have many slots) */
			consider_large(cy, b, i);
		for (uint32_t w = 0; s->nslots > 1 && w < (s->nslots + 63u) / 64u; w++) {
			uint64_t used = __atomic_load_n(&bm[w], __ATOMIC_ACQUIRE);
			for (; used; used &= used - 1) {	/* each set bit once */
				uint32_t slot = w * 64u + (uint32_t)__builtin_ctzll(used);
				if (slot < s->nslots && !hd_mark_test(cy->mark, i, slot))
					consider(cy, b, i, slot);
				if (b->n == GC_BATCH)
					sweep_batch(cy, b);
			}
		}
		if (b->n == GC_BATCH)
			sweep_batch(cy, b);
	}
	sweep_batch(cy, b);
	free(b);
	/* Small arenas the sweep (or earlier frees) emptied and nobody leases
	 * go back to the pool, so that another slot size, a large object or
	 * a session log can have the space (FORMAT.md 6.3 says when this is
	 * safe). After the sweep: this cycle's snapshot is not used again.
	 * Only when a lease or an attach found no space since the last time:
	 * otherwise an empty arena stays, ready for the next lease of its
	 * slot size, rather than go back and forth between heapd and the
	 * pool (each time a chance for the pool's small allocations to split
	 * the room a whole arena needs). */
	if (__atomic_exchange_n(&cy->col->want_space, 0, __ATOMIC_ACQ_REL))
		cy->fig->arenas_freed = hd_arenas_free_empty(cy->hd);
	cy->fig->sweep_ns = hd_mono_ns() - t0;
}

/* ------------------------------------------------------------------ */
/* The thread. */

static void record(struct hd_collector *col, const struct hd_gc_cycle *f)
{
	col->hist[col->hist_next] = *f;
	col->hist_next = (col->hist_next + 1) % HD_GC_RECENT;
	if (col->nhist < HD_GC_RECENT)
		col->nhist++;
	col->totals.cycles++;
	col->totals.given_up += strcmp(f->outcome, "done") != 0;
	col->totals.freed += f->freed;
	col->totals.bytes_freed += f->bytes_freed;
}

static void run_cycle(struct hd_collector *col, const char *trigger)
{
	struct hd *hd = col->hd;
	struct hd_gc_cycle f;
	struct cycle cy;
	memset(&f, 0, sizeof(f));
	memset(&cy, 0, sizeof(cy));
	snprintf(f.trigger, sizeof(f.trigger), "%s", trigger);
	f.started_ns = hd_now_ns();
	f.running = 1;
	cy.hd = hd;
	cy.col = col;
	cy.fig = &f;
	__atomic_store_n(&hd->gc_leased, 0, __ATOMIC_RELAXED);
	mark_phase(&cy);
	if (!cy.why)
		sweep_phase(&cy);
	if (cy.state)
		set_state(hd, uh_gc_state_make(uh_gc_cycle(cy.state), UH_GC_IDLE));
	f.phase = UH_GC_IDLE;
	f.running = 0;
	snprintf(f.outcome, sizeof(f.outcome), "%s", cy.why ? cy.why : "done");
	pthread_mutex_lock(&hd->mu);
	__atomic_store_n(&col->used_after, used_bytes_locked(hd), __ATOMIC_RELAXED);
	int recovered = !cy.why && hd->rec.gc_pending;
	if (recovered) {
		/* The first whole cycle after a start that left the mark to
		 * it: what recovery would have found (FORMAT.md 9.4). */
		hd->rec.gc_pending = 0;
		hd->rec.live_objects = f.marked;
		hd->rec.freed_objects = f.freed;
		hd->rec.gc_us = (hd_mono_ns() - hd->rec_t0) / 1000u;
	}
	pthread_mutex_unlock(&hd->mu);
	hd_mark_free(cy.mark);
	uh_arena_index_free(&cy.snap);
	free(cy.sess);
	free(cy.early.v);
	hd_log(cy.why ? "warn" : "info", "gc_cycle", "cycle=%llu trigger=\"%s\" outcome=\"%s\" "
	       "marked=%llu freed=%llu bytes_freed=%llu rescued=%llu mark_us=%llu sweep_us=%llu "
	       "max_handshake_us=%llu arenas_freed=%u barriers=%llu", (unsigned long long)f.cycle,
	       f.trigger, f.outcome,
	       (unsigned long long)f.marked, (unsigned long long)f.freed,
	       (unsigned long long)f.bytes_freed, (unsigned long long)f.rescued,
	       (unsigned long long)f.mark_ns / 1000, (unsigned long long)f.sweep_ns / 1000,
	       (unsigned long long)f.max_handshake_ns / 1000, f.arenas_freed,
	       (unsigned long long)cy.barriers);
	if (recovered)
		hd_log("info", "recovery_gc", "live=%llu freed=%llu ms_since_start=%llu",
		       (unsigned long long)f.marked, (unsigned long long)f.freed,
		       (unsigned long long)(hd->rec.gc_us / 1000u));
	pthread_mutex_lock(&col->mu);
	if (recovered)
		col->recovery_pending = 0;
	record(col, &f);
	col->cur = f;
	col->finished++;
	pthread_cond_broadcast(&col->cv);
	pthread_mutex_unlock(&col->mu);
}

/* Bytes of the slots in use (bitmap bits set), over every arena. */
static uint64_t used_bytes_locked(struct hd *hd)
{
	const struct uh_arena_ent *dir = hd_arena_dir(hd);
	uint64_t sum = 0;
	for (uint32_t i = 0; i < hd->hdr->arena_cap; i++) {	/* bounded by arena_cap */
		const struct uh_arena_hdr *ah = dir[i].kind ? hd_arena_hdr_ok(hd, i) : NULL;
		if (!ah)
			continue;
		const uint64_t *bm = uh_arena_bitmap(hd->base, dir[i].off);
		uint64_t bits = 0;
		for (uint32_t w = 0; w < (ah->nslots + 63u) / 64u; w++)	/* bitmap words */
			bits += (uint64_t)__builtin_popcountll(__atomic_load_n(&bm[w],
									      __ATOMIC_RELAXED));
		sum += bits * ah->slot_size;
	}
	return sum;
}

/* Heap fill: the bytes of slots in use against what the pool can hold
 * (the heap size, or less once a lease has found no space: see
 * hd->gc_arena_cap), and at least an arena's worth more in use than
 * after the last cycle (else a cycle would find little to free). */
static int filled(struct hd *hd, struct hd_collector *col)
{
	pthread_mutex_lock(&hd->mu);
	uint64_t cap = __atomic_load_n(&hd->gc_arena_cap, __ATOMIC_RELAXED);
	if (!cap || cap > hd->heap_size)
		cap = hd->heap_size;
	uint64_t used = used_bytes_locked(hd);
	pthread_mutex_unlock(&hd->mu);
	return used * 100 >= hd->gc_opts.gc_fill_pct * cap &&
	       used >= __atomic_load_n(&col->used_after, __ATOMIC_RELAXED) + hd->hdr->arena_size;
}

/* The automatic rule (struct hd_opts), checked every GC_TICK_NS: a
 * trigger name, or NULL. */
static const char *auto_trigger(struct hd_collector *col)
{
	struct hd *hd = col->hd;
	uint64_t leased = __atomic_load_n(&hd->gc_leased, __ATOMIC_RELAXED);
	const struct hd_opts *o = &hd->gc_opts;
	if (o->gc_every && leased >= o->gc_every)
		return "leased bytes";
	return o->gc_fill_pct && filled(hd, col) ? "heap fill" : NULL;
}

/* A pending request this thread runs (col->mu held): the urgent thread
 * takes the urgent ones, the background thread the others. */
static int take_request_locked(struct hd_collector *col, int urgent, char *trigger, size_t n)
{
	if (col->busy || !col->requested || col->req_urgent != urgent)
		return 0;
	snprintf(trigger, n, "%s", col->req_trigger);
	col->requested = 0;
	col->req_urgent = 0;
	return 1;
}

/* The background thread's own reasons for a cycle, at its timer's tick
 * (col->mu held; auto_trigger runs without it). */
static int background_trigger_locked(struct hd_collector *col, uint64_t *next_tick,
				     char *trigger, size_t n)
{
	if (col->busy || col->requested || hd_mono_ns() < *next_tick)
		return 0;
	*next_tick = hd_mono_ns() + GC_TICK_NS;
	if (col->recovery_pending && col->serving) {
		/* Given up (a stuck session): again, at the next tick. */
		snprintf(trigger, n, "recovery");
		return 1;
	}
	pthread_mutex_unlock(&col->mu);
	const char *t = auto_trigger(col);
	pthread_mutex_lock(&col->mu);
	if (!t || col->busy || col->requested)
		return 0;	/* a request came meanwhile: it goes first */
	snprintf(trigger, n, "%s", t);
	return 1;
}

static void wait_tick_locked(struct hd_collector *col, int urgent)
{
	if (urgent) {
		pthread_cond_wait(&col->cv, &col->mu);
		return;
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t ns = (uint64_t)ts.tv_nsec + GC_TICK_NS;
	ts.tv_sec += (time_t)(ns / 1000000000ull);
	ts.tv_nsec = (long)(ns % 1000000000ull);
	pthread_cond_timedwait(&col->cv, &col->mu, &ts);
}

static void *collector_main(void *arg)
{
	struct col_thread *me = arg;
	struct hd_collector *col = me->col;
	uint64_t next_tick = hd_mono_ns() + GC_TICK_NS;
	pthread_setname_np(pthread_self(), me->urgent ? "gc-urgent" : "gc-background");
	if (!me->urgent && col->hd->gc_opts.gc_nice)	/* per thread on Linux */
		setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), col->hd->gc_opts.gc_nice);
	pthread_mutex_lock(&col->mu);
	while (!col->stop) {	/* until hd_collector_stop */
		char trigger[32];
		if (!take_request_locked(col, me->urgent, trigger, sizeof(trigger)) &&
		    (me->urgent || !background_trigger_locked(col, &next_tick, trigger,
							      sizeof(trigger)))) {
			wait_tick_locked(col, me->urgent);
			continue;
		}
		col->busy = 1;
		col->started++;
		memset(&col->cur, 0, sizeof(col->cur));
		col->cur.running = 1;
		col->cur.phase = UH_GC_MARK;
		col->cur.cycle = uh_gc_cycle(col->hd->hdr->gc_state) + 1;
		snprintf(col->cur.trigger, sizeof(col->cur.trigger), "%s", trigger);
		snprintf(col->cur.outcome, sizeof(col->cur.outcome), "running");
		pthread_mutex_unlock(&col->mu);
		run_cycle(col, trigger);
		pthread_mutex_lock(&col->mu);
		col->busy = 0;
		pthread_cond_broadcast(&col->cv);	/* a request may wait for the other thread */
	}
	pthread_mutex_unlock(&col->mu);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Requests. */

/* Ask for a cycle (urgent: a lease or an attach waits for it); returns
 * the count of finished cycles to wait for. join: a running cycle will
 * do. Without it the cycle waited for begins after this call: one that
 * began before may have marked from roots the caller has dropped since
 * (a snapshot at its start), so it need not free the caller's garbage,
 * and a lease that waited for it would give up on a heap full of it. */
static uint64_t request_locked(struct hd_collector *col, const char *trigger, int urgent,
			       int join)
{
	if (join && col->cur.running && col->started > col->finished)
		return col->started;	/* join the running one */
	if (!col->requested)
		snprintf(col->req_trigger, sizeof(col->req_trigger), "%s", trigger);
	col->requested = 1;
	col->req_urgent |= urgent;
	pthread_cond_broadcast(&col->cv);
	return col->started + 1;
}

/* Wait until target cycles have finished or deadline (CLOCK_REALTIME ns,
 * 0 = none) passes. Returns nonzero if they have. */
static int wait_locked(struct hd_collector *col, uint64_t target, uint64_t deadline)
{
	while (col->finished < target && !col->stop) {	/* each wake re-checks */
		if (!deadline) {
			pthread_cond_wait(&col->cv, &col->mu);
			continue;
		}
		if (hd_now_ns() >= deadline)
			return 0;
		struct timespec ts = { (time_t)(deadline / 1000000000ull),
				       (long)(deadline % 1000000000ull) };
		pthread_cond_timedwait(&col->cv, &col->mu, &ts);
	}
	return col->finished >= target;
}

int hd_gc_run(struct hd *hd, const char *trigger, int wait, struct hd_gc_cycle *out,
	      char *err, size_t errlen)
{
	struct hd_collector *col = hd->col;
	if (!col)
		return hd_err(err, errlen, UH_ESTATE, "this heapd runs no collector");
	pthread_mutex_lock(&col->mu);
	uint64_t target = request_locked(col, trigger, 0, 0);
	if (wait && wait_locked(col, target, 0)) {
		*out = col->hist[(col->hist_next + HD_GC_RECENT - 1) % HD_GC_RECENT];
	} else if (wait) {
		*out = col->cur;	/* heapd is stopping */
	} else {	/* the cycle asked for: starting now, or next after the running one */
		int queued = col->cur.running;
		uint64_t last = queued ? col->cur.cycle : uh_gc_cycle(hd->hdr->gc_state);
		memset(out, 0, sizeof(*out));
		out->running = !queued;
		out->cycle = last + 1;
		snprintf(out->trigger, sizeof(out->trigger), "%s", trigger);
		snprintf(out->outcome, sizeof(out->outcome), queued ? "queued" : "running");
	}
	pthread_mutex_unlock(&col->mu);
	return 0;
}

const char *hd_gc_phase_name(uint32_t phase)
{
	return phase == UH_GC_MARK ? "mark" : phase == UH_GC_SWEEP ? "sweep" : "idle";
}

uint32_t hd_gc_recent(struct hd *hd, struct hd_gc_cycle *out, uint32_t max)
{
	struct hd_collector *col = hd->col;
	uint32_t n = 0;
	if (!col)
		return 0;
	pthread_mutex_lock(&col->mu);
	for (; n < max && n < col->nhist; n++)	/* <= HD_GC_RECENT */
		out[n] = col->hist[(col->hist_next + HD_GC_RECENT - 1 - n) % HD_GC_RECENT];
	pthread_mutex_unlock(&col->mu);
	return n;
}

void hd_gc_totals_get(struct hd *hd, struct hd_gc_totals *out)
{
	struct hd_collector *col = hd->col;
	memset(out, 0, sizeof(*out));
	if (!col)
		return;
	pthread_mutex_lock(&col->mu);
	*out = col->totals;
	pthread_mutex_unlock(&col->mu);
}

/* hd->gc_kick, at each lease: the leased-bytes rule. hd->mu is held
 * (lock order: hd->mu, then col->mu). */
static void kick(struct hd *hd)
{
	struct hd_collector *col = hd->col;
	const struct hd_opts *o = &hd->gc_opts;
	uint64_t leased = __atomic_load_n(&hd->gc_leased, __ATOMIC_RELAXED);
	if (!o->gc_every || leased < o->gc_every)
		return;	/* the fill rule waits for the timer: it reads every bitmap */
	pthread_mutex_lock(&col->mu);
	if (!col->cur.running || col->started == col->finished)
		request_locked(col, "leased bytes", 0, 1);
	pthread_mutex_unlock(&col->mu);
}

/* hd->gc_full: run a cycle and wait for it (bounded); hd->mu not held.
 * 0: it did not end in time; 1: it ended, given up or freeing nothing;
 * 2: it ended and freed objects or arenas. */
static int full(struct hd *hd)
{
	struct hd_collector *col = hd->col;
	__atomic_store_n(&col->want_space, 1, __ATOMIC_RELEASE);
	pthread_mutex_lock(&col->mu);
	uint64_t target = request_locked(col, "lease failed", 1, 0);
	int done = wait_locked(col, target, hd_now_ns() + GC_FULL_WAIT_NS);
	const struct hd_gc_cycle *last = &col->hist[(col->hist_next + HD_GC_RECENT - 1) %
						     HD_GC_RECENT];
	int freed = done && !strcmp(last->outcome, "done") &&
		    (last->freed > 0 || last->arenas_freed > 0);
	pthread_mutex_unlock(&col->mu);
	return !done ? 0 : freed ? 2 : 1;
}

/* ------------------------------------------------------------------ */
/* Start and stop. */

/* A large region of the old sweep's range whose object it freed and whose
 * return to the pool it did not reach: returned now. 1 if it was. */
static int release_large_locked(struct hd *hd, const struct uh_arena_span *s)
{
	const struct uh_arena_hdr *ah = (const struct uh_arena_hdr *)(hd->base + s->arena_off);
	uint32_t idx = (uint32_t)ah->dir_index;
	return ah->magic == UH_ARENA_MAGIC && hd_arena_hdr_ok(hd, idx) == ah &&
	       hd_arena_dir(hd)[idx].kind == UH_ARENA_LARGE && hd_large_free_locked(hd, idx) == 0;
}

/* The previous heapd died, maybe in a sweep: objects may still be locked
 * by its gc_session. Recovery GC clears such locks on the objects it
 * marks, but not on those the sweep had freed already (valid bit clear,
 * bit cleared by recovery), and it is deferred while clients of that
 * heapd run; this releases them all (a freed one's bitmap bit is cleared
 * too: no client claims a slot whose bit is set). Left locked, a freed
 * object's word would name the new collector's slot (heapd takes its
 * session first, so usually the same one): uh_pin of a stale reference
 * waits for the sweep to release such a lock, and would wait forever.
 * Called before the collector's own session exists. */
static void release_old_locks_locked(struct hd *hd, uint32_t old)
{
	uint64_t v = next_version(hd, NULL), n = 0, returned = 0;
	uint64_t lo = hd->hdr->gc_sweep_lo, hi = hd->hdr->gc_sweep_hi;
	/* No client runs: a slot of the range without its valid bit is one
	 * the sweep freed and had not yet cleared the bit of (a claim in
	 * progress, the other such state, needs a running client). */
	int alone = hd->ninherited == 0;
	for (uint32_t i = 0; lo < hi && i < hd->ix.n; i++) {	/* bounded by the index */
		const struct uh_arena_span *s = &hd->ix.v[i];
		if (s->first_slot + (uint64_t)s->nslots * s->slot_size <= lo ||
		    s->first_slot >= hi)
			continue;	/* no lock of the old sweep can be here */
		for (uint32_t k = 0; k < s->nslots; k++) {	/* bounded by nslots */
			struct uh_objhdr *oh = (struct uh_objhdr *)(hd->base + s->first_slot +
								    (uint64_t)k * s->slot_size);
			uint64_t w = __atomic_load_n(&oh->lock, __ATOMIC_ACQUIRE);
			int mine = uh_lock_is_locked(w) && uh_lock_owner(w) == old;
			int valid = __atomic_load_n(&oh->size, __ATOMIC_ACQUIRE) & UH_OBJ_VALID;
			if (mine) {
				__atomic_store_n(&oh->lock, v, __ATOMIC_RELEASE);
				n++;
			}
			if (valid || !(mine || alone))
				continue;
			if (s->slot_size > UH_SMALL_MAX)
				returned += release_large_locked(hd, s);
			else
				uh_bitmap_clear(uh_arena_bitmap(hd->base, s->arena_off), k);
		}
	}
	if (returned)
		uh_arena_index_build(&hd->ix);	/* a stale span must never match */
	hd_log("info", "gc_locks_released", "gc_session=%u count=%llu large_returned=%llu", old,
	       (unsigned long long)n, (unsigned long long)returned);
}

/* heapd's session: a slot with a log whose state stays ACTIVE. */
static int take_session(struct hd *hd, struct hd_collector *col, char *err, size_t errlen)
{
	struct hd_session_info info;
	pthread_mutex_lock(&hd->mu);
	uint32_t old = hd->hdr->gc_session;
	/* gc_session is 0 after a clean stop; hd_open has made the phase
	 * IDLE already, so whether the old heapd was sweeping is unknown:
	 * after a crash the range its last batch locked is looked at
	 * (uh_hdr.gc_sweep_lo/hi), whichever way recovery went (recovery
	 * GC clears the locks of what it marks, not of what the sweep had
	 * freed already). */
	if (old && uh_arena_index_build(&hd->ix) == 0)
		release_old_locks_locked(hd, old);
	sweep_range(hd, 1, 0, 0);	/* released */
	pthread_mutex_unlock(&hd->mu);
	int rc = hd_session_attach(hd, (uint32_t)getpid(), 0, "heapd collector", 0, 0, &info,
				   err, errlen);
	if (rc)
		return rc;
	col->session = info.session;
	pthread_mutex_lock(&hd->mu);
	struct uh_log_hdr *log = hd_session_log_locked(hd, info.session);
	if (log) {
		log->state = UH_LOG_ACTIVE;
		uh_persist_range(&hd->persist, &log->state, sizeof(log->state));
	}
	hd->hdr->gc_session = info.session;
	uh_persist_range(&hd->persist, &hd->hdr->gc_session, sizeof(hd->hdr->gc_session));
	pthread_mutex_unlock(&hd->mu);
	return 0;
}

int hd_gc_start(struct hd *hd, char *err, size_t errlen)
{
	struct hd_collector *col = calloc(1, sizeof(*col));
	if (!col)
		return hd_err(err, errlen, UH_ENOMEM, "out of memory");
	col->hd = hd;
	pthread_mutex_init(&col->mu, NULL);
	pthread_cond_init(&col->cv, NULL);
	const char *at = getenv("UNIHEAP_GC_STOP_AT");
	col->stop_at = at && !strcmp(at, "mark") ? 1 : at && !strcmp(at, "sweep") ? 2 : 0;
	const char *crash = getenv("UNIHEAP_GC_CRASH_AT_BARRIER");
	col->crash_at = crash ? strtoull(crash, NULL, 10) : 0;
	col->hold = getenv("UNIHEAP_GC_HOLD");
	int rc = take_session(hd, col, err, errlen);
	pthread_mutex_lock(&hd->mu);
	col->recovery_pending = hd->rec.gc_pending;	/* run from hd_gc_serving */
	pthread_mutex_unlock(&hd->mu);
	/* The thread starts with every signal blocked: heapd's SIGTERM must
	 * reach the server's sigwait (server.cc), not kill the process from
	 * here before the socket is removed. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	col->bg = (struct col_thread){ col, 0, 0, 0 };
	col->urgent = (struct col_thread){ col, 0, 1, 0 };
	if (!rc)
		col->bg.started = pthread_create(&col->bg.thread, NULL, collector_main,
						 &col->bg) == 0;
	if (!rc && col->bg.started)
		col->urgent.started = pthread_create(&col->urgent.thread, NULL, collector_main,
						     &col->urgent) == 0;
	if (!rc && !col->urgent.started)
		rc = hd_err(err, errlen, UH_ENOMEM, "cannot start the collector threads");
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc && col->bg.started) {
		pthread_mutex_lock(&col->mu);
		col->stop = 1;
		pthread_cond_broadcast(&col->cv);
		pthread_mutex_unlock(&col->mu);
		pthread_join(col->bg.thread, NULL);
	}
	if (rc) {
		if (col->session)
			hd_session_detach(hd, col->session, 1);
		pthread_cond_destroy(&col->cv);
		pthread_mutex_destroy(&col->mu);
		free(col);
		return rc;
	}
	hd->col = col;
	hd->gc_kick = kick;
	hd->gc_full = full;
	hd_log("info", "collector_started", "gc_session=%u gc_every=%llu gc_fill_pct=%llu",
	       col->session, (unsigned long long)hd->gc_opts.gc_every,
	       (unsigned long long)hd->gc_opts.gc_fill_pct);
	return 0;
}

void hd_gc_serving(struct hd *hd)
{
	struct hd_collector *col = hd ? hd->col : NULL;
	if (!col)
		return;
	pthread_mutex_lock(&col->mu);
	col->serving = 1;
	if (col->recovery_pending)
		request_locked(col, "recovery", 0, 1);
	pthread_mutex_unlock(&col->mu);
}

void hd_gc_stop(struct hd *hd)
{
	struct hd_collector *col = hd ? hd->col : NULL;
	if (!col)
		return;
	pthread_mutex_lock(&col->mu);
	__atomic_store_n(&col->stop, 1, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&col->cv);
	pthread_mutex_unlock(&col->mu);
	pthread_join(col->bg.thread, NULL);
	pthread_join(col->urgent.thread, NULL);
	pthread_mutex_lock(&hd->mu);
	hd->gc_kick = NULL;
	hd->gc_full = NULL;
	hd->hdr->gc_session = 0;
	pthread_mutex_unlock(&hd->mu);
	hd_session_detach(hd, col->session, 1);
	hd->col = NULL;
	pthread_cond_destroy(&col->cv);
	pthread_mutex_destroy(&col->mu);
	free(col);
}
