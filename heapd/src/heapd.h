/*
 * heapd.h -- the daemon's core, as the gRPC adapter (server.cc) and main.c
 * see it. The core is C and owns the heap through libpmemobj; the adapter
 * is C++ and only translates RPCs into these calls.
 *
 * Threading: every hd_* call may come from any gRPC thread; the core
 * serializes them on one internal mutex (control calls are rare).
 * Errors: 0 or a negative UH_E* code, plus a message in err (one line,
 * naming what was wrong) when err is not NULL.
 */
#ifndef HEAPD_H
#define HEAPD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "uniheap.h"
#include "format.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hd;

#define HD_GC_OFF UINT64_MAX
#define HD_GC_FILL_DEFAULT 75	/* % of the pool in use: --gc-fill's default */
#define HD_GC_NICE_DEFAULT 10	/* --gc-nice's default */
struct hd_opts {
	const char *heap_path;
	int create;		/* create when the file is missing */
	uint64_t size;		/* with create: pool size in bytes */
	uint64_t max_size;	/* with create: the most the file may grow to
				 * (FORMAT.md 1.1); 0 = size, no growth */
	uint32_t durability;	/* with create: UH_DUR_*; 0 = sync */
	const char *name;	/* with create: heap name, NULL = file name */
	uint32_t log_size;	/* with create: bytes per session log; 0 = default */
	uint32_t arena_size;	/* with create: 0 = default */
	const char *gc_path;	/* the GC file (FORMAT.md 9.3); NULL = none */
	/* Automatic GC (collector.c). At each arena lease: a cycle starts
	 * when the arena bytes leased since the last cycle reach gc_every.
	 * Every 100 ms: that, or when the slots in use (arena bitmaps) hold
	 * gc_fill_pct percent of what the pool can hold and an arena's
	 * worth more than after the last cycle. What the pool can hold is
	 * the heap size until a lease finds no space, then the arena bytes
	 * there were then. HD_GC_OFF: that rule is off; 0: its default
	 * (gc_every off, gc_fill_pct HD_GC_FILL_DEFAULT). A lease that finds
	 * no space always runs a cycle and tries again (arenas.c). */
	uint64_t gc_every;
	uint64_t gc_fill_pct;
	/* The nice value of the thread that runs the cycles nobody waits for
	 * (collector.c): 0 = heapd's own priority. */
	int gc_nice;
	/* Recovery's mark at start (FORMAT.md 9.4): HD_RECOVERY_AUTO leaves it
	 * to an online cycle after serving when no power loss can have come
	 * since the heap was last served; HD_RECOVERY_FULL always runs it. */
	int recovery_gc;
};

#define HD_RECOVERY_AUTO 0
#define HD_RECOVERY_FULL 1

/* Last start-up recovery, as StatusResponse.last_recovery reports it. */
struct hd_recovery {
	uint64_t logs_replayed, logs_discarded;
	uint64_t live_objects, freed_objects, nulled_refs, locks_cleared;
	uint64_t duration_us;
	int gc_deferred;
	/* The mark is an online cycle's (FORMAT.md 9.4): gc_online; until
	 * that cycle ends, gc_pending, and live_objects and freed_objects
	 * are not known yet. Read and written under hd->mu. */
	int gc_online, gc_pending;
	uint64_t gc_us;		/* from the start of recovery to that cycle's end */
};

/* Create or open the heap and recover it (log replay, then recovery GC).
 * On failure *out is untouched and err names the problem: missing file
 * without create, not a uniheap heap, format version mismatch, corrupt
 * header, size too small. */
int hd_open(const struct hd_opts *o, struct hd **out, char *err, size_t errlen);
/* Close the pool. Sessions still attached are left as they are (their
 * logs are recovered at the next start). NULL is ignored. */
void hd_close(struct hd *hd);

/* Read-only views for the adapter (never freed while hd lives). */
const char *hd_heap_path(struct hd *hd);
/* The GC file's path for Welcome.gc_path; "" when heapd has none. */
const char *hd_gc_path(struct hd *hd);
char *hd_base(struct hd *hd);
const struct uh_hdr *hd_header(struct hd *hd);
uint64_t hd_header_off(struct hd *hd);

/* ---- sessions ---- */
struct hd_session_info {
	uint32_t session;
	uint64_t token;
	uint64_t log_off, log_size;	/* 0 for readonly sessions */
};
/* prev_session/prev_token: 0, or the session this same process (pid) had
 * with a heapd that ended (re-attach): it is recovered like a dead
 * client's and its arenas go to the new session. A prev_session that is
 * not active is ignored; one of another process or token is refused. */
int hd_session_attach(struct hd *hd, uint32_t pid, int readonly, const char *client,
		      uint32_t prev_session, uint64_t prev_token,
		      struct hd_session_info *out, char *err, size_t errlen);
/* The session's stream ended. graceful: it said Goodbye. Either way its
 * log is replayed (if committed) or rolled back, its locks released, its
 * arenas returned, its slot freed. */
void hd_session_detach(struct hd *hd, uint32_t session, int graceful);
/* Reap the sessions a previous heapd left behind whose process has
 * exited since (called periodically by the server). Can't fail. */
void hd_reap_inherited(struct hd *hd);
/* 0 if (session, token) names an attached session, else UH_EINVAL. */
int hd_session_check(struct hd *hd, uint32_t session, uint64_t token,
		     char *err, size_t errlen);

/* ---- classes ---- */
int hd_class_register(struct hd *hd, const char *name, const uh_field_spec *fields,
		      uint32_t nfields, uint32_t *class_id, int *created,
		      char *err, size_t errlen);
/* Descriptor of a class id (points into the mapping), NULL if unused. */
const struct uh_class_desc *hd_class_get(struct hd *hd, uint32_t class_id);
int hd_class_find(struct hd *hd, const char *name, uint32_t *class_id);
uint64_t hd_class_desc_off(struct hd *hd, uint32_t class_id);

/* ---- arenas ---- */
struct hd_arena {
	uint64_t arena_off;
	uint32_t slot_size;
	uint32_t nslots;
	uint64_t first_slot;
};
int hd_arena_lease(struct hd *hd, uint32_t session, uint32_t slot_size,
		   struct hd_arena *out, char *err, size_t errlen);
int hd_large_lease(struct hd *hd, uint32_t session, uint64_t size,
		   struct hd_arena *out, char *err, size_t errlen);
int hd_arena_return(struct hd *hd, uint32_t session, uint64_t arena_off,
		    char *err, size_t errlen);

/* ---- log extents ---- */
/* Allocate an extent of about size bytes and chain it after the session's
 * log's last one (one transaction). UH_ENOSPC when the heap is full. */
int hd_log_extent_lease(struct hd *hd, uint32_t session, uint64_t size, uint64_t *off,
			uint64_t *got, char *err, size_t errlen);
/* Free every extent of the session's log; UH_ESTATE while a block uses it. */
int hd_log_trim(struct hd *hd, uint32_t session, char *err, size_t errlen);

/* ---- admin ---- */
struct hd_status {
	uint32_t sessions, classes, arenas;
	uint64_t arena_bytes, roots, uptime_ms;
	uint64_t heapd_starts;		/* heapds that opened this heap, this one too */
	struct hd_recovery last_recovery;
};
void hd_status_get(struct hd *hd, struct hd_status *out);
/* Grow the heap file to at least want bytes (FORMAT.md 1.1: whole chunks,
 * at most max_size); *size is its size after, *us the time of the last
 * growth. UH_ENOSPC naming the limit past max_size or when the file
 * system is full. */
int hd_grow(struct hd *hd, uint64_t want, uint64_t *size, uint64_t *us, char *err,
	    size_t errlen);

struct hd_stats {
	uint64_t attaches, detaches, sessions_reaped, reattaches;
	uint64_t logs_replayed, logs_rolled_back, locks_released;
	uint64_t arenas_leased, arenas_returned, classes_registered;
	uint64_t log_extents_leased, log_trims;
	/* Blocks clients committed (that wrote) and rolled back by conflicts,
	 * summed from their GC areas at hd_stats_get (0 without a GC file). */
	uint64_t commits, conflicts;
};
void hd_stats_get(struct hd *hd, struct hd_stats *out);

/* ---- online GC (collector.c) ---- */
/* Start the collector thread (after hd_open: the heap is recovered) with
 * a session slot of its own; stop it (hd_close does too). */
int hd_gc_start(struct hd *hd, char *err, size_t errlen);
void hd_gc_stop(struct hd *hd);
/* Reserve each small arena's memory ahead of its lease, on a thread of
 * its own (arenas.c); 0, or -1 when it could not start (leases then
 * allocate as they come). Stopped, the reservation cancelled, by
 * hd_spare_stop (hd_close does it too). */
int hd_spare_start(struct hd *hd);
void hd_spare_stop(struct hd *hd);
/* The server accepts clients now: a recovery that left its mark to the
 * collector (FORMAT.md 9.4) has it run from here, so that its cycle does
 * not hold up the start of serving. */
void hd_gc_serving(struct hd *hd);
struct hd_gc_cycle {
	uint64_t cycle;		/* uh_hdr.gc_state >> 2 */
	uint32_t phase;		/* UH_GC_IDLE, UH_GC_MARK, UH_GC_SWEEP */
	int running;
	char outcome[96];	/* "done", "given up: <why>", "running" */
	char trigger[32];	/* "command", "heap fill", "leased bytes", "lease failed" */
	uint64_t marked, freed, bytes_freed, rescued;
	uint64_t mark_ns, sweep_ns, max_handshake_ns, started_ns;
	uint32_t arenas_freed;	/* empty unleased small arenas given back */
};
#define HD_GC_RECENT 16
/* "idle", "mark", "sweep". */
const char *hd_gc_phase_name(uint32_t phase);
/* Start a cycle (or join the one running) and fill *out with it; with
 * wait, return when it has ended. UH_ESTATE when heapd has no collector. */
int hd_gc_run(struct hd *hd, const char *trigger, int wait, struct hd_gc_cycle *out,
	      char *err, size_t errlen);
/* The last cycles, newest first; returns how many (<= max). */
uint32_t hd_gc_recent(struct hd *hd, struct hd_gc_cycle *out, uint32_t max);
/* Totals of the cycles this heapd ran (all 0 without a collector). */
struct hd_gc_totals {
	uint64_t cycles;	/* ended, done or given up */
	uint64_t given_up;
	uint64_t freed, bytes_freed;
};
void hd_gc_totals_get(struct hd *hd, struct hd_gc_totals *out);

/* Roots, in table order: see uh_rootmap_next(). Takes the core mutex. */
int hd_roots_next(struct hd *hd, uint64_t *cursor, const char **name, size_t *name_len,
		  uint64_t *value);

/* ---- serving (server.cc) ---- */
/* Bind socket_path (mode 0600; a stale socket of a dead heapd is replaced,
 * a live one refused), serve until SIGTERM/SIGINT, then stop cleanly.
 * Only heapd's own user and root may connect.
 * Returns 0 after a clean shutdown, else an error with err set. */
int hd_serve(struct hd *hd, const char *socket_path, char *err, size_t errlen);
/* hd_serve, shared with the members of group gid (HD_NO_GROUP: not
 * shared): the socket gets mode 0660 and that group, folders heapd makes
 * for it 0750, and users whose primary or supplementary groups include gid
 * may connect too. */
#define HD_NO_GROUP ((gid_t)-1)
int hd_serve_shared(struct hd *hd, const char *socket_path, gid_t gid, char *err,
		    size_t errlen);
/* hd_serve_shared, and with metrics ("HOST:PORT", NULL: none) Prometheus'
 * text at http://HOST:PORT/metrics from a thread of heapd's until it
 * stops (server_metrics.h); an address it cannot listen on fails the
 * start (UH_EIO, err says why). */
int hd_serve_metrics(struct hd *hd, const char *socket_path, gid_t gid, const char *metrics,
		     char *err, size_t errlen);

/* ---- sharing with a group (share.c) ---- */
/* Give path to group gid and set mode. Returns 0, or -1 with err naming
 * the path and the cause (EPERM: heapd's user must own path and belong
 * to the group). */
int hd_share_path(const char *path, gid_t gid, mode_t mode, char *err, size_t errlen);

/* ---- service manager (notify.c) ---- */
/* Send state ("READY=1", "STOPPING=1", newline-separated assignments of
 * sd_notify(3)) to the service manager named by $NOTIFY_SOCKET; nothing
 * without it. A failure is logged, never fatal. */
void hd_notify(const char *state);

/* ---- logging (log.c) ---- */
/* One structured line to stderr:
 *   ts=<RFC3339> level=<level> event=<event> <fmt-formatted key=value ...> */
void hd_log(const char *level, const char *event, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#ifdef __cplusplus
}
#endif

#endif /* HEAPD_H */
