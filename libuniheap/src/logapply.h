/*
 * logapply.h -- replaying and rolling back a session's redo log. The one
 * implementation used by a committing client, by heapd when it reaps a dead
 * session, and by heapd's start-up recovery.
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

/* Checksum of a log's entries as stored in uh_log_hdr.checksum. */
uint64_t uh_log_checksum(const struct uh_log_hdr *log);

/* Nonzero if log is COMMITTED, its entries lie inside log_size and its
 * checksum matches: only such a log may be replayed. */
int uh_log_is_committed(const struct uh_log_hdr *log, uint64_t log_size);

/*
 * Apply a committed log in place: WRITE data to its targets, FREE clears
 * the object's valid bit. Ranges are flushed and one drain ends it. Every
 * entry is bounds-checked against heap_size; a bad one stops the replay
 * with UH_EINTERNAL (nothing after it applied). Idempotent: a crash during
 * replay is repaired by replaying again.
 * Does not touch lock words or bitmaps (see uh_log_finish).
 */
int uh_log_apply(char *base, uint64_t heap_size, const struct uh_log_hdr *log,
		 const struct uh_persist *p, struct uh_log_counts *c);

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
void uh_log_finish(char *base, uint64_t heap_size, const struct uh_log_hdr *log,
		   uint32_t session, int committed, uint64_t new_version,
		   struct uh_arena_index *ix, struct uh_log_counts *c);

/* Iterate entries: *pos starts at 0. Returns the next entry (bounds checked
 * against nbytes) or NULL at the end or on a malformed entry. */
const struct uh_log_ent *uh_log_next(const struct uh_log_hdr *log, uint64_t *pos);

#endif /* UH_LOGAPPLY_H */
