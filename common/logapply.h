/*
 * logapply.h -- replaying and rolling back a session's redo log. The one
 * implementation used by a committing client, by heapd when it reaps a dead
 * session, and by heapd's start-up recovery.
 *
 * A log is its area (header + entries) and the extents chained from the
 * header's next (FORMAT.md 8.1): every function here walks all of them,
 * segment after segment, checking each extent before it reads it.
 */
#ifndef UH_LOGAPPLY_H
#define UH_LOGAPPLY_H

#include <stdint.h>

#include "arena.h"
#include "format.h"
#include "persist.h"

struct uh_log_counts {
	uint64_t writes;
	uint64_t allocs;
	uint64_t frees;
	uint64_t locks_released;
};

/* Where a log lives: the mapping and the log area. */
struct uh_log_loc {
	char *base;
	uint64_t heap_size;
	struct uh_log_hdr *log;
	uint64_t log_size;	/* bytes of the log area */
	uint32_t version;	/* the heap's format version: how its checksum runs (8.3) */
};

/* The extent at off if it lies in the heap and its header is that of an
 * extent of session (magic, size, nbytes inside it); else NULL. */
struct uh_log_ext *uh_log_ext_at(const struct uh_log_loc *l, uint64_t off);

/* A cursor over the entries of every segment, in chain order. */
struct uh_log_cur {
	const struct uh_log_loc *l;
	const char *data;	/* entries of the current segment */
	uint64_t nbytes;	/* ... and their bytes */
	uint64_t pos;
	uint64_t next;		/* the next extent, 0 = none */
	uint64_t left;		/* extents still allowed: a cycle cannot loop */
	int bad;		/* a malformed entry or extent ended the walk */
};
void uh_log_cur_init(struct uh_log_cur *c, const struct uh_log_loc *l);
/* The next entry (bounds checked against its segment), or NULL at the end
 * or at a malformed entry or extent (then c->bad is set). */
const struct uh_log_ent *uh_log_cur_next(struct uh_log_cur *c);

/* Checksum of a log as stored in uh_log_hdr.checksum (FORMAT.md 8.3):
 * seq, the entry bytes of every segment in chain order, then the bytes of
 * every object an ALLOC entry names (format 4). *bad (may be NULL) is set
 * when the chain is damaged or an ALLOC names no object inside the heap. */
uint64_t uh_log_checksum(const struct uh_log_loc *l, int *bad);

/* Nonzero if the log is COMMITTED, its chain is sound, and its checksum
 * matches: only such a log may be replayed. */
int uh_log_is_committed(const struct uh_log_loc *l);

/*
 * Apply a committed log in place: WRITE data to its targets, FREE clears
 * the object's valid bit, ALLOC sets it (where an older log's replay
 * cleared it: FORMAT.md 8.4). Ranges are flushed and one drain ends it. Every
 * entry is bounds-checked against heap_size; a bad one stops the replay
 * with UH_EINTERNAL (nothing after it applied). Idempotent: a crash during
 * replay is repaired by replaying again.
 * Does not touch lock words or bitmaps (see uh_log_finish). p->overwrite,
 * if set, sees each WRITE's target bytes before they are overwritten and
 * each FREE's payload before the valid bit is cleared (persist.h).
 */
int uh_log_apply(const struct uh_log_loc *l, const struct uh_persist *p,
		 struct uh_log_counts *c);

/*
 * After apply (committed) or instead of it (rolled back): release every
 * lock the log names that session still holds, with version new_version;
 * fix bitmaps: FREE clears the slot bit when committed; ALLOC clears the
 * slot bit and valid bit when rolled back. A log in state APPLIED (the
 * client died after applying, while releasing) only has its locks
 * released: its slots are left to recovery GC, since the client may have
 * released them already and another session reused them. An IDLE log is
 * left alone. ix locates arenas; it is rebuilt from the directory on a
 * miss. Never fails; malformed entries are skipped.
 */
void uh_log_finish(const struct uh_log_loc *l, uint32_t session, int committed,
		   uint64_t new_version, struct uh_arena_index *ix, struct uh_log_counts *c);

#endif /* UH_LOGAPPLY_H */
