/*
 * logapply.c -- redo-log replay and rollback, shared by the committing
 * client, heapd's reaper and heapd's start-up recovery.
 *
 * The log is client-written memory, so every entry and every extent is
 * bounds-checked before use: a damaged log can make a replay stop early,
 * never make the reader touch memory outside the heap or loop.
 */
#include <string.h>

#include "logapply.h"

static inline const char *log_entries(const struct uh_log_hdr *log)
{
	return (const char *)log + sizeof(*log);
}

struct uh_log_ext *uh_log_ext_at(const struct uh_log_loc *l, uint64_t off)
{
	if (off < UH_HDR_SIZE || off % 8 || off > l->heap_size - sizeof(struct uh_log_ext))
		return NULL;
	struct uh_log_ext *x = (struct uh_log_ext *)(l->base + off);
	if (x->magic != UH_LOG_EXT_MAGIC || x->session != l->log->session ||
	    x->size < sizeof(*x) || x->size > l->heap_size - off ||
	    x->nbytes > x->size - sizeof(*x))
		return NULL;
	return x;
}

void uh_log_cur_init(struct uh_log_cur *c, const struct uh_log_loc *l)
{
	const struct uh_log_hdr *log = l->log;

	c->l = l;
	c->data = log_entries(log);
	c->nbytes = log->nbytes;
	c->pos = 0;
	c->next = log->next;
	c->left = l->heap_size / UH_LOG_EXT_MIN;
	c->bad = l->log_size < sizeof(*log) || log->nbytes > l->log_size - sizeof(*log);
	if (c->bad)
		c->nbytes = c->next = 0;
}

/* Move to the next extent; 0 at the end of the chain or on damage. */
static int cur_next_segment(struct uh_log_cur *c)
{
	if (!c->next)
		return 0;
	const struct uh_log_ext *x = uh_log_ext_at(c->l, c->next);
	if (!x || c->left-- == 0) {
		c->bad = 1;
		return 0;
	}
	c->data = (const char *)(x + 1);
	c->nbytes = x->nbytes;
	c->pos = 0;
	c->next = x->next;
	return 1;
}

const struct uh_log_ent *uh_log_cur_next(struct uh_log_cur *c)
{
	/* bound: the chain has at most c->left extents */
	while (c->pos >= c->nbytes) {
		if (!cur_next_segment(c))
			return NULL;
	}
	uint64_t p = c->pos, n = c->nbytes;
	const struct uh_log_ent *e = (const void *)(c->data + p);
	uint64_t step = n - p < UH_LOG_ENT_SIZE ? 0 : UH_LOG_ENT_SIZE + UH_ALIGN_UP((uint64_t)e->len, 8);
	if (step == 0 || step > n - p) {
		c->bad = 1;
		return NULL;
	}
	c->pos = p + step;
	return e;
}

/* The word sum (FORMAT.md 8.3), the log checksum of format 4, eight
 * bytes at a time: FNV-1a's byte loop cost a commit two dependent
 * operations per logged byte. Each little-endian word w (a tail
 * zero-padded): h ^= w; h *= UH_SUM_MUL; h ^= h >> 29 (the shift carries
 * high bits down, which the multiply alone never does). */
#define UH_SUM_MUL 0x9e3779b97f4a7c15ull
#define UH_SUM_LANE 32u		/* bytes of one step of the four lanes */

static inline uint64_t sum_step(uint64_t h, uint64_t w)
{
	h = (h ^ w) * UH_SUM_MUL;
	return h ^ (h >> 29);
}

static uint64_t sum_words(const void *p, uint64_t n, uint64_t h)
{
	const unsigned char *b = p;

	for (; n > 0; n -= n < 8 ? n : 8, b += 8) {	/* bound: n / 8 + 1 */
		uint64_t w = 0;
		memcpy(&w, b, n < 8 ? n : 8);
		h = sum_step(h, w);
	}
	return h;
}

/* The lane sum, that of formats 5 and 6: the word sum's steps depend on
 * each other (about six cycles a word), so a piece of 32 bytes or more
 * runs as four word sums side by side, lane i from h ^ i * UH_SUM_MUL over
 * word i of every 32-byte block; lane 0 then takes the bytes after the
 * last block, and h becomes lane 0 stepped with lanes 1, 2 and 3. A node
 * image of a kilobyte, the most of a sorted-map commit's log, sums about
 * three times faster. Shorter pieces take the word sum. */
static uint64_t sum_lanes(const void *p, uint64_t n, uint64_t h)
{
	const unsigned char *b = p;
	uint64_t l0 = h, l1 = h ^ UH_SUM_MUL, l2 = h ^ 2 * UH_SUM_MUL, l3 = h ^ 3 * UH_SUM_MUL;

	if (n < UH_SUM_LANE)
		return sum_words(p, n, h);
	for (; n >= UH_SUM_LANE; n -= UH_SUM_LANE, b += UH_SUM_LANE) {	/* bound: n / 32 */
		uint64_t w[4];
		memcpy(w, b, sizeof(w));
		l0 = sum_step(l0, w[0]);
		l1 = sum_step(l1, w[1]);
		l2 = sum_step(l2, w[2]);
		l3 = sum_step(l3, w[3]);
	}
	l0 = sum_words(b, n, l0);
	return sum_step(sum_step(sum_step(l0, l1), l2), l3);
}

/* A piece of the checksum, summed as the log's format version says:
 * FNV-1a up to 3, the word sum in 4, the lane sum from 5 on. */
static uint64_t sum_bytes(const struct uh_log_loc *l, const void *p, uint64_t n, uint64_t h)
{
	if (l->version <= UH_FORMAT_VERSION_V3)
		return uh_fnv1a64(p, n, h);
	return l->version == UH_FORMAT_VERSION_V4 ? sum_words(p, n, h) : sum_lanes(p, n, h);
}

/* The bytes of a new object that commit makes durable with its log: all
 * but the lock word (run-time state). The valid bit counts as set, so a
 * FREE of the object in the same block (applied after the log is durable)
 * leaves the sum unchanged; the generation, in the same 8-byte word, tells
 * a slot's earlier object from this one. Later blocks may change the
 * object: the sum then fails, which is right, since only a log whose
 * apply may not have finished must be replayed (8.4). */
static uint64_t sum_object(const struct uh_log_loc *l, const struct uh_log_ent *e,
			   uint64_t h, int *bad)
{
	uint64_t obj = e->obj, slot = e->arg;

	if (obj < UH_HDR_SIZE || obj % 8 || slot < UH_OBJHDR_SIZE || obj > l->heap_size ||
	    slot > l->heap_size - obj) {
		*bad = 1;
		return h;
	}
	const struct uh_objhdr *o = (const void *)(l->base + obj);
	uint32_t words[2] = { o->class_word, o->size | UH_OBJ_VALID };
	uint64_t payload = o->size & UH_OBJ_SIZE_MASK;

	if (payload > slot - UH_OBJHDR_SIZE)
		payload = slot - UH_OBJHDR_SIZE;
	h = sum_bytes(l, words, sizeof(words), h);
	return sum_bytes(l, l->base + obj + UH_OBJHDR_SIZE, payload, h);
}

uint64_t uh_log_checksum(const struct uh_log_loc *l, int *bad)
{
	struct uh_log_cur c;
	const struct uh_log_ent *e;
	uint64_t h = sum_bytes(l, &l->log->seq, sizeof(l->log->seq), UH_FNV_INIT);
	int objbad = 0;

	uh_log_cur_init(&c, l);
	do {	/* bound: the cursor's extent budget */
		h = sum_bytes(l, c.data, c.nbytes, h);
	} while (!c.bad && cur_next_segment(&c));
	if (!c.bad && l->version > UH_FORMAT_VERSION_V3) {
		uh_log_cur_init(&c, l);
		while ((e = uh_log_cur_next(&c)) != NULL && !objbad)	/* bound: the chain's bytes */
			if (e->kind == UH_LE_ALLOC)
				h = sum_object(l, e, h, &objbad);
	}
	if (bad)
		*bad = c.bad || objbad;
	return h;
}

int uh_log_is_committed(const struct uh_log_loc *l)
{
	int bad;

	if (l->log->magic != UH_LOG_MAGIC || l->log->state != UH_LOG_COMMITTED)
		return 0;
	uint64_t sum = uh_log_checksum(l, &bad);
	return !bad && sum == l->log->checksum;
}

/* obj names a whole object header inside the heap. */
static int obj_in_heap(uint64_t obj, uint64_t heap_size)
{
	return obj >= UH_HDR_SIZE && obj % 8 == 0 && obj <= heap_size - UH_OBJHDR_SIZE;
}

int uh_log_apply(const struct uh_log_loc *l, const struct uh_persist *p,
		 struct uh_log_counts *c)
{
	char *base = l->base;
	uint64_t heap_size = l->heap_size;
	const struct uh_log_ent *e;
	struct uh_log_cur cur;
	int rc = 0;

	uh_log_cur_init(&cur, l);
	while ((e = uh_log_cur_next(&cur)) != NULL) {	/* bound: the chain's bytes */
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
			if (p->overwrite)
				p->overwrite(p->ctx, base + e->arg, e + 1, e->len);
			memcpy(base + e->arg, (const char *)(e + 1), e->len);
			p->flush(p->ctx, base + e->arg, e->len);
			c->writes++;
		} else if (e->kind == UH_LE_ALLOC) {
			/* Set already, except in a recovery that replayed an
			 * older lazy log's FREE of this slot first (8.4). */
			uint32_t sz = __atomic_load_n(&o->size, __ATOMIC_ACQUIRE);
			if (!(sz & UH_OBJ_VALID)) {
				__atomic_or_fetch(&o->size, UH_OBJ_VALID, __ATOMIC_RELEASE);
				p->flush(p->ctx, &o->size, sizeof(o->size));
			}
		} else if (e->kind == UH_LE_FREE) {
			/* Readers see the object gone from here on; the slot
			 * itself is released in uh_log_finish, after the lock.
			 * Its payload's references die with it (the barrier). */
			uint32_t psz = __atomic_load_n(&o->size, __ATOMIC_ACQUIRE) & UH_OBJ_SIZE_MASK;
			if (p->overwrite && psz <= heap_size - e->obj - UH_OBJHDR_SIZE)
				p->overwrite(p->ctx, o + 1, NULL, psz);
			__atomic_and_fetch(&o->size, ~UH_OBJ_VALID, __ATOMIC_RELEASE);
			p->flush(p->ctx, &o->size, sizeof(o->size));
			c->frees++;
		}
	}
	/* Every applied write is durable after this one barrier. */
	p->drain(p->ctx);
	return rc ? rc : cur.bad ? UH_EINTERNAL : 0;
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

void uh_log_finish(const struct uh_log_loc *l, uint32_t session, int committed,
		   uint64_t new_version, struct uh_arena_index *ix, struct uh_log_counts *c)
{
	char *base = l->base;
	uint64_t heap_size = l->heap_size;
	const struct uh_log_hdr *log = l->log;
	const struct uh_log_ent *e;
	struct uh_log_cur cur;

	if (log->magic != UH_LOG_MAGIC || log->state == UH_LOG_IDLE)
		return;
	/* Pass 1: locks. Even a rolled-back block gets a new version: an
	 * unlogged single-field store may have reached the object. A block's
	 * new objects (ALLOC) stay locked by it until it ends (FORMAT.md
	 * 9.3): released here too, before a rollback frees their slots. */
	uh_log_cur_init(&cur, l);
	while ((e = uh_log_cur_next(&cur)) != NULL) {	/* bound: the chain's bytes */
		if ((e->kind != UH_LE_LOCK && e->kind != UH_LE_ALLOC) ||
		    !obj_in_heap(e->obj, heap_size))
			continue;
		release_lock(base, e, session, new_version, c);
	}
	if (log->state == UH_LOG_APPLIED)
		return;
	/* Pass 2: slots, after the locks, so that a slot another session
	 * reuses at once never gets our lock release written over it. */
	uh_log_cur_init(&cur, l);
	while ((e = uh_log_cur_next(&cur)) != NULL) {	/* bound: the chain's bytes */
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
