/*
 * logapply.c -- redo-log replay and rollback, shared by the committing
 * client, heapd's reaper and heapd's start-up recovery.
 *
 * The log is client-written memory, so every entry is bounds-checked
 * before use: a damaged log can make a replay stop early, never make the
 * reader touch memory outside the heap.
 */
#include <string.h>

#include "logapply.h"

static inline const char *log_entries(const struct uh_log_hdr *log)
{
	return (const char *)log + sizeof(*log);
}

uint64_t uh_log_checksum(const struct uh_log_hdr *log)
{
	uint64_t h = uh_fnv1a64(&log->seq, sizeof(log->seq), UH_FNV_INIT);
	return uh_fnv1a64(log_entries(log), log->nbytes, h);
}

int uh_log_is_committed(const struct uh_log_hdr *log, uint64_t log_size)
{
	if (log->magic != UH_LOG_MAGIC || log->state != UH_LOG_COMMITTED)
		return 0;
	if (log_size < sizeof(*log) || log->nbytes > log_size - sizeof(*log))
		return 0;
	return uh_log_checksum(log) == log->checksum;
}

const struct uh_log_ent *uh_log_next(const struct uh_log_hdr *log, uint64_t *pos)
{
	uint64_t p = *pos, n = log->nbytes;

	if (p >= n || n - p < UH_LOG_ENT_SIZE)
		return NULL;
	const struct uh_log_ent *e = (const void *)(log_entries(log) + p);
	uint64_t step = UH_LOG_ENT_SIZE + UH_ALIGN_UP((uint64_t)e->len, 8);
	if (step > n - p)
		return NULL;
	*pos = p + step;
	return e;
}

/* obj names a whole object header inside the heap. */
static int obj_in_heap(uint64_t obj, uint64_t heap_size)
{
	return obj >= UH_HDR_SIZE && obj % 8 == 0 && obj <= heap_size - UH_OBJHDR_SIZE;
}

int uh_log_apply(char *base, uint64_t heap_size, const struct uh_log_hdr *log,
		 const struct uh_persist *p, struct uh_log_counts *c)
{
	const struct uh_log_ent *e;
	uint64_t pos = 0;
	int rc = 0;

	while ((e = uh_log_next(log, &pos)) != NULL) {	/* bound: nbytes */
		if (!obj_in_heap(e->obj, heap_size)) {
			rc = UH_EINTERNAL;
			break;
		}
		struct uh_objhdr *o = (void *)(base + e->obj);
		if (e->kind == UH_LE_WRITE) {
			if (e->arg < e->obj + UH_OBJHDR_SIZE || e->arg > heap_size ||
			    e->len > heap_size - e->arg) {
				rc = UH_EINTERNAL;
				break;
			}
			memcpy(base + e->arg, (const char *)(e + 1), e->len);
			p->flush(p->ctx, base + e->arg, e->len);
			c->writes++;
		} else if (e->kind == UH_LE_FREE) {
			/* Readers see the object gone from here on; the slot
			 * itself is released in uh_log_finish, after the lock. */
			__atomic_and_fetch(&o->size, ~UH_OBJ_VALID, __ATOMIC_RELEASE);
			p->flush(p->ctx, &o->size, sizeof(o->size));
			c->frees++;
		}
	}
	/* Every applied write is durable after this one barrier. */
	p->drain(p->ctx);
	return rc;
}

/* Release a lock the session still holds; anything else is not ours. */
static void release_lock(char *base, const struct uh_log_ent *e, uint32_t session,
			 uint64_t word, struct uh_log_counts *c)
{
	struct uh_objhdr *o = (void *)(base + e->obj);
	uint64_t w = __atomic_load_n(&o->lock, __ATOMIC_ACQUIRE);

	if (!uh_lock_is_locked(w) || uh_lock_owner(w) != session)
		return;
	if (__atomic_compare_exchange_n(&o->lock, &w, word, 0, __ATOMIC_RELEASE,
					__ATOMIC_RELAXED))
		c->locks_released++;
}

static void release_slot(char *base, uint64_t obj, struct uh_arena_index *ix,
			 int drop_valid)
{
	uint32_t slot;
	const struct uh_arena_span *s = uh_arena_slot_of(ix, obj, &slot);

	if (!s)
		return;
	if (drop_valid) {
		struct uh_objhdr *o = (void *)(base + obj);
		__atomic_and_fetch(&o->size, ~UH_OBJ_VALID, __ATOMIC_RELEASE);
	}
	uh_bitmap_clear(uh_arena_bitmap(base, s->arena_off), slot);
}

void uh_log_finish(char *base, uint64_t heap_size, const struct uh_log_hdr *log,
		   uint32_t session, int committed, uint64_t new_version,
		   struct uh_arena_index *ix, struct uh_log_counts *c)
{
	const struct uh_log_ent *e;
	uint64_t pos = 0;

	if (log->magic != UH_LOG_MAGIC || log->state == UH_LOG_IDLE)
		return;
	/* Pass 1: locks. Even a rolled-back block gets a new version: an
	 * unlogged single-field store may have reached the object. */
	while ((e = uh_log_next(log, &pos)) != NULL) {	/* bound: nbytes */
		if (e->kind != UH_LE_LOCK || !obj_in_heap(e->obj, heap_size))
			continue;
		release_lock(base, e, session, new_version, c);
	}
	if (log->state == UH_LOG_APPLIED)
		return;
	/* Pass 2: slots, after the locks, so that a slot another session
	 * reuses at once never gets our lock release written over it. */
	pos = 0;
	while ((e = uh_log_next(log, &pos)) != NULL) {	/* bound: nbytes */
		if (!obj_in_heap(e->obj, heap_size))
			continue;
		if (committed && e->kind == UH_LE_FREE)
			release_slot(base, e->obj, ix, 0);
		else if (!committed && e->kind == UH_LE_ALLOC) {
			release_slot(base, e->obj, ix, 1);
			c->allocs++;
		}
	}
}
