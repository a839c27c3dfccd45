/*
 * tx.c -- failure-atomic blocks: a per-session redo log plus encounter-time
 * object locks.
 *
 * During a block, writes to existing objects go to the log (and are read
 * back from it); objects allocated in the block are written in place,
 * since nobody can reach them before commit. They stay locked by the
 * session until the block ends (alloc.c), so that the online collector's
 * sweep, which only takes unlocked objects, leaves them alone; commit
 * releases them with the commit's version, a rollback with a new one.
 * The block knows them by its news map, never by their lock word. The
 * lock word of every object written or freed is taken on first touch and
 * held to the end. A data type that rewrites many small parts of one
 * object (a sorted-map node's slots) asks for an image at its first
 * write: one WRITE entry holding the object's bytes, taken right after
 * the lock (so no earlier write of the block is lost), where every later
 * write of the block to them lands.
 *
 * Commit, with what each barrier makes durable (FORMAT.md 8.4):
 *   B1  the new objects, the log entries and the log header (COMMITTED,
 *       nbytes, replay order, a checksum over entries and new objects):
 *       from here on the block survives any crash (recovery replays it).
 *   B2  the applied writes and frees, in place.
 * B2's stores run inside a busy section of the online collector
 * (gcring.c), opened before the reads are validated (so that no reference
 * the block stores can leave the heap unseen before B2 stores it, FORMAT.md
 * 9.3), and so does a single write's store: while it marks, the bytes they
 * overwrite and the payloads they free go grey first.
 * Then: state APPLIED, flushed but not fenced: the session's next barrier
 * makes it durable, and so does any other session's (barrier.c), which is
 * what keeps a late replay of this log from overwriting a later block
 * that takes over our locks or slots; locks released with
 * version = ++clock, state IDLE, freed slots released.
 *
 * Isolation (time-based STM): a block takes rv = clock when it begins.
 * Every read of an object it has not locked records the object's version
 * and checks that the object is unlocked, not newer than rv (else rv is
 * extended after re-validating every read) and unchanged across the read,
 * so a block always sees one consistent snapshot. Taking a lock checks the
 * version against the one read before; a writing block re-validates all
 * its reads before it becomes durable. Read-only blocks take no lock and
 * write nothing shared. Two barriers per writing block, however many
 * fields it wrote and objects it allocated.
 *
 * References: the uh_tx_* entry points take references (offset and
 * generation, uniheap.h "direct") or plain offsets, and keep only the
 * offset (UH_REF_OFFSET): the lock word, the log entries and the maps
 * below are about the physical object. Checking the generation is the
 * caller's (uh_obj_get), before it hands an object here.
 */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "logapply.h"
#include "uhint.h"

#define LOCK_SPINS 64		/* busy spins before sleeping */
#define LOCK_SLEEPS 40		/* sleeps (50 us doubling to 1.6 ms) before conflict */
#define LOCK_SLEEPS_HOLDING 2	/* the same while holding other locks */

static void tx_reset(uh_heap *h)
{
	struct uh_tx *t = &h->tx;

	t->pos = t->nentries = 0;
	t->last_obj = 0;
	u64map_clear(&t->images);
	u64map_clear(&t->reads);
	t->reads_list.n = 0;
	u64map_clear(&t->writes);
	u64map_clear(&t->locks);
	u64map_clear(&t->news);
	t->news_list.n = t->locked_list.n = t->freed_list.n = t->changed.n = 0;
}

void uh_tx_free_state(uh_heap *h)
{
	struct uh_tx *t = &h->tx;

	u64map_free(&t->reads);
	free(t->reads_list.v);
	u64map_free(&t->writes);
	u64map_free(&t->images);
	u64map_free(&t->locks);
	u64map_free(&t->news);
	free(t->news_list.v);
	free(t->locked_list.v);
	free(t->changed.v);
	free(t->freed_list.v);
	memset(t, 0, sizeof(*t));
}

static void release_slot(uh_heap *h, uint64_t obj)
{
	uint32_t slot;
	const struct uh_arena_span *s = uh_arena_slot_of(&h->ix, obj, &slot);
	if (!s)
		return;
	uh_bitmap_clear(uh_arena_bitmap(h->base, s->arena_off), slot);
	/* A large object's region goes back to heapd at once, whichever
	 * session leased it, else a session that keeps freeing big objects
	 * would fill the arena directory. A refusal (heapd gone) is fine:
	 * recovery GC reclaims the region. */
	if (s->nslots == 1 && h->ctl && uhc_connected(h->ctl)) {
		char keep[1024];	/* the caller's message must survive */
		snprintf(keep, sizeof(keep), "%s", uh_errmsg());
		if (uhc_return_arena(h->ctl, s->arena_off) == 0)
			uh_arena_index_build(&h->ix);
		uh_err_set(0, "%s", keep);
	}
}

/* A new object of the block, still locked by it (alloc.c), unlocked with
 * version; only if the word is still ours: after heapd restarted under
 * the block, the slot may be another's already. */
static void release_new(uh_heap *h, struct uh_objhdr *o, uint64_t version)
{
	uint64_t w = __atomic_load_n(&o->lock, __ATOMIC_ACQUIRE);

	if (uh_lock_is_locked(w) && uh_lock_owner(w) == h->session)
		__atomic_compare_exchange_n(&o->lock, &w, version, 0, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED);
}

/* Undo everything a block did: nothing reached its targets, so locks get
 * their old words back and new objects are released (their lock with a
 * new version, before the slot goes back). The log goes IDLE last: until
 * then heapd would roll the same things back if we died. */
static void tx_rollback(uh_heap *h)
{
	struct uh_tx *t = &h->tx;

	for (uint32_t i = 0; i < t->locked_list.n; i++) {	/* bound: locked */
		uint64_t obj = t->locked_list.v[i];
		struct uh_objhdr *o = (void *)(h->base + obj);
		__atomic_store_n(&o->lock, *u64map_get(&t->locks, obj), __ATOMIC_RELEASE);
	}
	uint64_t version = t->news_list.n ? __atomic_add_fetch(&h->hdr->clock, 1,
							       __ATOMIC_ACQ_REL) : 0;
	for (uint32_t i = 0; i < t->news_list.n; i++) {	/* bound: allocated */
		uint64_t obj = t->news_list.v[i];
		struct uh_objhdr *o = (void *)(h->base + obj);
		__atomic_and_fetch(&o->size, ~UH_OBJ_VALID, __ATOMIC_RELEASE);
		release_new(h, o, version);
		release_slot(h, obj);
	}
	if (h->log)
		__atomic_store_n(&h->log->state, UH_LOG_IDLE, __ATOMIC_RELEASE);
	tx_reset(h);
	if (h->log)
		uh_logchain_trim(h);
}

/* Roll back now but keep the nesting: every later call in the block and
 * its commit report rc, so nested code cannot mistake it for success. */
static int tx_doom(uh_heap *h, int rc)
{
	tx_rollback(h);
	h->tx.doomed = rc;
	h->st.aborts++;
	if (rc == UH_ELOGFULL || rc == UH_ENOSPC)
		h->st.aborts_logfull++;
	return rc;
}

int uh_tx_heapd_restarted(uh_heap *h)
{
	if (h->tx.doomed)
		return uh_err_set(h->tx.doomed, "block was rolled back: %s",
				  uh_strerror(h->tx.doomed));
	h->st.conflicts++;
	uh_gc_count(h, 1);
	return tx_doom(h, uh_err_set(UH_ECONFLICT, "heapd restarted: the block was rolled "
				     "back; run it again (the next block attaches anew)"));
}

/* Doomed by an object that stayed locked past the bounded wait. */
static int locked_out(uh_heap *h, uint64_t obj, const char *what)
{
	const struct uh_objhdr *o = (const void *)(h->base + obj);
	uint64_t w = __atomic_load_n(&o->lock, __ATOMIC_RELAXED);

	h->st.conflicts++;
	uh_gc_count(h, 1);
	h->st.aborts_locked++;
	h->tx.lost_on = obj;
	return tx_doom(h, uh_err_set(UH_ECONFLICT, "object %llu stayed locked by session %u "
				     "(%s); block rolled back, run it again",
				     (unsigned long long)obj, uh_lock_owner(w), what));
}

static int log_append(uh_heap *h, uint32_t kind, uint64_t obj, uint64_t arg,
		      const void *data, uint32_t len, uint64_t *pos_out)
{
	struct uh_tx *t = &h->tx;
	uint64_t need = UH_LOG_ENT_SIZE + UH_ALIGN_UP((uint64_t)len, 8);

	if (!h->log)	/* read-only handle: nothing may change */
		return uh_err_set(UH_EREADONLY, "heap is connected read-only");
	if (t->pos == 0)
		uh_logchain_start(h);
	struct uh_log_ent *e;
	int rc = uh_logchain_reserve(h, need, (void **)&e);
	if (rc && h->tx.doomed)
		return rc;	/* heapd restarted under the block: rolled back */
	if (rc) {	/* the log could not grow: heap full, or heapd gone */
		char msg[1024];
		snprintf(msg, sizeof(msg), "%s", uh_errmsg());
		return tx_doom(h, uh_err_set(rc, "the block's redo log could not grow beyond "
					     "%llu bytes: %s; block rolled back",
					     (unsigned long long)t->pos, msg));
	}
	e->kind = kind;
	e->len = len;
	e->obj = obj;
	e->arg = arg;
	if (len)
		memcpy(e + 1, data, len);
	if (pos_out)
		*pos_out = (uint64_t)((char *)e - h->base);
	t->pos += need;
	t->nentries++;
	h->st.log_bytes += need;
	/* Publish the entry to a reaping heapd only once it is complete. */
	uh_logchain_publish(h, need);
	return 0;
}

static void lock_backoff(int round)
{
	if (round < LOCK_SPINS) {
		__builtin_ia32_pause();
		return;
	}
	long ns = 50000L << ((round - LOCK_SPINS) < 5 ? (round - LOCK_SPINS) : 5);
	struct timespec ts = { 0, ns };
	nanosleep(&ts, NULL);
}

static int stale(uh_heap *h, uint64_t obj)
{
	h->st.conflicts++;
	uh_gc_count(h, 1);
	h->st.aborts_stale++;
	h->tx.lost_on = obj;
	return tx_doom(h, uh_err_set(UH_ECONFLICT, "object %llu changed after this block "
				     "read it; block rolled back, run it again",
				     (unsigned long long)obj));
}

/* A lock held by another session whose block has not started to apply:
 * the bytes in place are still those of the version the lock word keeps
 * (the owner sets COMMITTED, then fences, then applies). */
static int owner_not_applying(uh_heap *h, uint64_t w)
{
	const struct uh_log_hdr *log = uh_session_log(h, uh_lock_owner(w));
	return log && __atomic_load_n(&log->state, __ATOMIC_ACQUIRE) == UH_LOG_ACTIVE;
}

int uh_lock_version_locked(uh_heap *h, uint64_t obj, uint64_t w, uint64_t *v)
{
	if (uh_lock_owner(w) == h->session) {
		uint64_t *old = h->tx.depth ? u64map_get(&h->tx.locks, obj) : NULL;
		*v = old ? *old : uh_lock_old_version(w);
		return 1;
	}
	if (!owner_not_applying(h, w))
		return 0;
	*v = uh_lock_old_version(w);
	return 1;
}

int uh_lock_still_locked(uh_heap *h, uint64_t obj, uint64_t w)
{
	const struct uh_objhdr *o = (const void *)(h->base + obj);

	return __atomic_load_n(&o->lock, __ATOMIC_ACQUIRE) == w &&
	       (uh_lock_owner(w) == h->session || owner_not_applying(h, w));
}

/* Is obj still at the version this block read? At commit (strict) an
 * object another session holds locked is not: that session will commit
 * after us having read what we write, or the other way round (write skew).
 * Mid-block, to move the snapshot, its committed bytes are still current. */
static int read_valid(uh_heap *h, uint64_t obj, uint64_t seen, int strict)
{
	const struct uh_objhdr *o = (const void *)(h->base + obj);
	uint64_t v, w = __atomic_load_n(&o->lock, __ATOMIC_ACQUIRE);

	if (strict && uh_lock_is_locked(w) && uh_lock_owner(w) != h->session)
		return 0;
	return uh_lock_version(h, obj, w, &v) && v == seen;
}

static int reads_valid(uh_heap *h, int strict)
{
	struct uh_tx *t = &h->tx;

	for (uint32_t i = 0; i < t->reads_list.n; i++) {	/* bound: reads */
		uint64_t obj = t->reads_list.v[i];
		if (!read_valid(h, obj, *u64map_get(&t->reads, obj), strict)) {
			t->lost_on = obj;
			return 0;
		}
	}
	return 1;
}

int uh_tx_stale_or(uh_heap *h, int rc)
{
	if (!h->tx.depth || h->tx.doomed || reads_valid(h, 0))
		return rc;
	/* The offset came from a read that another commit has overwritten
	 * since (e.g. the object was freed and the reference changed): the
	 * block is stale, not the caller's argument wrong. */
	h->st.conflicts++;
	uh_gc_count(h, 1);
	h->st.aborts_stale++;
	return tx_doom(h, uh_err_set(UH_ECONFLICT, "an object this block read was changed "
				     "by another session; block rolled back, run it again"));
}

/* What this block holds of obj: UH_TX_NEW, UH_TX_LOCKED or 0, remembered
 * for the object asked last (uh_tx.last_obj; whoever changes what the
 * block holds of an object forgets it). */
static int tx_how(struct uh_tx *t, uint64_t obj)
{
	uint64_t *img;

	if (obj == t->last_obj)
		return t->last_how;
	t->last_obj = obj;
	t->last_seen = 0;
	t->last_img = 0;
	if (u64map_get(&t->locks, obj)) {
		t->last_how = UH_TX_LOCKED;
		if ((img = u64map_get(&t->images, obj)) != NULL)
			t->last_img = *img;
	} else {
		t->last_how = u64map_get(&t->news, obj) ? UH_TX_NEW : 0;
	}
	return t->last_how;
}

/* The bytes for [target, target + len) in the image of obj, a locked
 * object tx_how answered for last, if it has one: its entry's data, else
 * NULL; *err when the range straddles the image's edge (no caller does
 * that: an image is a whole payload). */
static char *image_at(uh_heap *h, uint64_t obj, uint64_t target, uint32_t len, int *err)
{
	struct uh_log_ent *e;

	*err = 0;
	if (h->tx.last_obj != obj || !h->tx.last_img)
		return NULL;
	e = (void *)(h->base + h->tx.last_img);
	if (target >= e->arg && target + len <= e->arg + e->len)
		return (char *)(e + 1) + (target - e->arg);
	if (target < e->arg + e->len && target + len > e->arg)
		*err = uh_err_set(UH_EINTERNAL, "an access of %u bytes at %llu straddles the "
				  "edge of object %llu's image in the block", len,
				  (unsigned long long)target, (unsigned long long)h->tx.last_obj);
	return NULL;
}

/* A newer object than our snapshot: move the snapshot forward if nothing
 * read so far has changed (cheaper than aborting). */
static int extend_snapshot(uh_heap *h)
{
	uint64_t now = __atomic_load_n(&h->hdr->clock, __ATOMIC_ACQUIRE);

	if (!reads_valid(h, 0))
		return 0;
	h->tx.rv = now;
	return 1;
}

int uh_tx_lock(uh_heap *h, uh_off ref)
{
	struct uh_tx *t = &h->tx;
	uint64_t obj = UH_REF_OFFSET(ref);
	struct uh_objhdr *o = (void *)(h->base + obj);
	int logged = 0, rc;

	if (tx_how(t, obj))
		return 0;
	/* A block that holds locks may be one link of a deadlock cycle
	 * (a->b against b->a): it waits only briefly, then gives up its
	 * locks. One that holds none can never close a cycle and waits long. */
	int rounds = t->locked_list.n ? LOCK_SPINS + LOCK_SLEEPS_HOLDING : LOCK_SPINS + LOCK_SLEEPS;
	for (int round = 0; round < rounds; round++) {
		uint64_t w = __atomic_load_n(&o->lock, __ATOMIC_ACQUIRE);
		if (uh_lock_is_locked(w)) {
			h->st.lock_waits++;
			lock_backoff(round);
			continue;
		}
		/* Log the intent before taking the lock: if we die holding
		 * it, heapd finds it in our log and releases it. */
		if (!logged && (rc = log_append(h, UH_LE_LOCK, obj, w, NULL, 0, NULL)) != 0)
			return rc;
		logged = 1;
		uint64_t mine = uh_lock_word(h->session, w);
		if (__atomic_compare_exchange_n(&o->lock, &w, mine, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			t->last_obj = 0;
			if ((rc = u64map_put(&t->locks, obj, w)) != 0 ||
			    (rc = u64vec_push(&t->locked_list, obj)) != 0) {
				__atomic_store_n(&o->lock, w, __ATOMIC_RELEASE);
				return tx_doom(h, uh_err_set(rc, "out of process memory"));
			}
			uint64_t *seen = u64map_get(&t->reads, obj);
			if (seen && *seen != w)
				return stale(h, obj);
			return 0;
		}
	}
	return locked_out(h, obj, "writing it");
}

int uh_tx_write(uh_heap *h, uh_off ref, uint64_t target, const void *src, uint32_t len)
{
	struct uh_tx *t = &h->tx;
	uint64_t obj = UH_REF_OFFSET(ref), *pos, p;
	char *at;
	int rc;

	target = UH_REF_OFFSET(target);
	if (t->doomed)
		return uh_err_set(t->doomed, "block was rolled back: %s", uh_strerror(t->doomed));
	int how = tx_how(t, obj);
	if (how == UH_TX_NEW) {
		memcpy(h->base + target, src, len);
		return 0;
	}
	if (how != UH_TX_LOCKED && (rc = uh_tx_lock(h, obj)) != 0)
		return rc;
	if ((at = image_at(h, obj, target, len, &rc)) != NULL || rc) {
		if (at)
			memcpy(at, src, len);
		return rc;
	}
	if ((pos = u64map_get(&t->writes, target)) != NULL) {
		struct uh_log_ent *e = (void *)(h->base + *pos);
		if (e->len == len) {
			memcpy(e + 1, src, len);
			return 0;
		}
	}
	if ((rc = log_append(h, UH_LE_WRITE, obj, target, src, len, &p)) != 0)
		return rc;
	if ((rc = u64map_put(&t->writes, target, p)) != 0)
		return tx_doom(h, uh_err_set(rc, "out of process memory"));
	return 0;
}

/* Only right after the block locked obj: before that it may have logged
 * writes to obj that an image of the bytes in place would lose. */
static int image_new(uh_heap *h, uint64_t obj, uint64_t img, uint32_t img_len)
{
	const struct uh_objhdr *o = (const void *)(h->base + obj);
	uint64_t payload = o->size & UH_OBJ_SIZE_MASK, p;
	int rc;

	if (img < obj + UH_OBJHDR_SIZE || img_len > payload ||
	    img - obj - UH_OBJHDR_SIZE > payload - img_len)
		return uh_err_set(UH_EINTERNAL, "an image of %u bytes at %llu does not lie inside "
				  "the %llu payload bytes of object %llu", img_len,
				  (unsigned long long)img, (unsigned long long)payload,
				  (unsigned long long)obj);
	if ((rc = log_append(h, UH_LE_WRITE, obj, img, h->base + img, img_len, &p)) != 0)
		return rc;
	if ((rc = u64map_put(&h->tx.images, obj, p)) != 0)
		return tx_doom(h, uh_err_set(rc, "out of process memory"));
	h->tx.last_obj = 0;	/* tx_how learns of the image */
	return 0;
}

int uh_tx_image(uh_heap *h, uh_off ref, uint64_t img, uint32_t img_len, char **mem)
{
	uint64_t obj = UH_REF_OFFSET(ref);
	int how, rc;

	*mem = NULL;
	img = UH_REF_OFFSET(img);
	if (h->tx.doomed)
		return uh_err_set(h->tx.doomed, "block was rolled back: %s",
				  uh_strerror(h->tx.doomed));
	how = tx_how(&h->tx, obj);
	if (how == UH_TX_NEW) {
		*mem = h->base + img;
		return 0;
	}
	if (!how && ((rc = uh_tx_lock(h, obj)) != 0 || (rc = image_new(h, obj, img, img_len)) != 0))
		return rc;
	tx_how(&h->tx, obj);
	*mem = image_at(h, obj, img, img_len, &rc);
	return rc;
}

int uh_tx_write_image(uh_heap *h, uh_off ref, uint64_t target, const void *src, uint32_t len,
		      uint64_t img, uint32_t img_len)
{
	char *mem;
	int rc = uh_tx_image(h, ref, img, img_len, &mem);

	return rc ? rc : uh_tx_write(h, ref, target, src, len);
}

/* The block read obj at version v (read_shared, uh_tx_note_read): 0 once
 * that is in its read set; 1 if it read obj before at another version;
 * < 0, the block doomed, when out of process memory (a read in the map
 * but not in the list would escape the commit's check). */
static inline int read_set_add(uh_heap *h, uint64_t obj, uint64_t v)
{
	struct uh_tx *t = &h->tx;
	uint64_t *seen;
	int rc;

	if (t->last_obj == obj && t->last_seen)
		return v != t->last_ver;
	if ((seen = u64map_get(&t->reads, obj)) != NULL) {
		if (*seen != v)
			return 1;
	} else if ((rc = u64map_put(&t->reads, obj, v)) != 0 ||
		   (rc = u64vec_push(&t->reads_list, obj)) != 0) {
		return tx_doom(h, uh_err_set(rc, "out of process memory"));
	}
	if (t->last_obj == obj) {
		t->last_seen = 1;
		t->last_ver = v;
	}
	return 0;
}

int uh_tx_note_read(uh_heap *h, uh_off ref, uint64_t v)
{
	struct uh_tx *t = &h->tx;
	uint64_t obj = UH_REF_OFFSET(ref);

	if (tx_how(t, obj))
		return 0;
	if (v > t->rv && !extend_snapshot(h))
		return 0;
	return read_set_add(h, obj, v) == 0;
}

const void *uh_tx_own_bytes(uh_heap *h, uh_off ref, uint64_t target, uint32_t len)
{
	uint64_t obj = UH_REF_OFFSET(ref);
	int how, err;

	if (!h->tx.depth || h->tx.doomed)
		return NULL;
	target = UH_REF_OFFSET(target);
	how = tx_how(&h->tx, obj);
	if (how == UH_TX_NEW)
		return h->base + target;
	return how == UH_TX_LOCKED ? image_at(h, obj, target, len, &err) : NULL;
}

/* A validated read of an object this block has not locked. */
static int read_shared(uh_heap *h, uint64_t obj, uint64_t target, void *dst, uint32_t len)
{
	struct uh_tx *t = &h->tx;
	int rc;

	for (int round = 0; round < LOCK_SPINS + LOCK_SLEEPS; round++) {
		uint64_t v, w1;
		if (!uh_lock_note(h, obj, &w1, &v)) {
			h->st.read_waits++;	/* the owner is applying: short */
			lock_backoff(round);
			continue;
		}
		if (v > t->rv && !extend_snapshot(h))
			return stale(h, obj);
		if (len == sizeof(struct uh_slot))	/* a data type's slot: inline */
			memcpy(dst, h->base + target, sizeof(struct uh_slot));
		else
			uh_load(dst, h->base + target, len);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		/* Same word and, if locked, its owner still not applying: the
		 * bytes read are version v's. */
		if (!uh_lock_still(h, obj, w1))
			continue;
		rc = read_set_add(h, obj, v);
		return rc == 1 ? stale(h, obj) : rc;
	}
	return locked_out(h, obj, "reading it");
}

/* The block's logged writes inside [target, target + len) over dst, which
 * holds those bytes as they lie in place. A write is logged at its own
 * offset, aligned to its length of 1 to 8 bytes, so each offset is looked
 * up: a read of a span of fields is not a common path. */
static void overlay_writes(uh_heap *h, uint64_t target, char *dst, uint32_t len)
{
	for (uint32_t b = 0; b < len; b++) {	/* bound: len */
		uint64_t *pos = u64map_get(&h->tx.writes, target + b);
		if (!pos)
			continue;
		const struct uh_log_ent *e = (const void *)(h->base + *pos);
		memcpy(dst + b, e + 1, e->len < len - b ? e->len : len - b);
	}
}

int uh_tx_read_in_block(uh_heap *h, uh_off ref, uint64_t target, void *dst, uint32_t len)
{
	struct uh_tx *t = &h->tx;
	uint64_t obj = UH_REF_OFFSET(ref), *pos;

	target = UH_REF_OFFSET(target);
	if (t->doomed) {
		memset(dst, 0, len);
		return uh_err_set(t->doomed, "block was rolled back: %s", uh_strerror(t->doomed));
	}
	/* Only objects this block locked have logged writes (uh_tx_write
	 * locks first; new objects are written in place). */
	int how = tx_how(t, obj), rc;
	if (how == UH_TX_LOCKED) {
		char *at = image_at(h, obj, target, len, &rc);
		if (at || rc) {
			if (at)
				memcpy(dst, at, len);
			else
				memset(dst, 0, len);
			return rc;
		}
		if (len > 8) {	/* several fields at once (uh_read) */
			uh_load(dst, h->base + target, len);	/* ours: stable */
			overlay_writes(h, target, dst, len);
			return 0;
		}
		if ((pos = u64map_get(&t->writes, target)) != NULL) {
			struct uh_log_ent *e = (void *)(h->base + *pos);
			memcpy(dst, e + 1, len < e->len ? len : e->len);
			return 0;
		}
	}
	if (how) {
		uh_load(dst, h->base + target, len);	/* ours: stable */
		return 0;
	}
	rc = read_shared(h, obj, target, dst, len);
	if (rc)
		memset(dst, 0, len);
	return rc;
}

int uh_tx_seen(uh_heap *h, uh_off ref, int own_ok, uint64_t *v)
{
	uint64_t obj = UH_REF_OFFSET(ref), *p;

	if (h->opt.on)
		return uh_opt_seen(h, obj, v);
	if (!h->tx.depth)
		return 0;
	if ((p = u64map_get(&h->tx.locks, obj)) != NULL) {
		if (!own_ok)
			return 0;
	} else if ((p = u64map_get(&h->tx.reads, obj)) == NULL) {
		return 0;
	}
	*v = *p;
	return 1;
}

int uh_tx_holds(uh_heap *h, uh_off ref)
{
	uint64_t obj = UH_REF_OFFSET(ref);

	return h->tx.depth ? tx_how(&h->tx, obj) : 0;
}

int uh_tx_log_alloc(uh_heap *h, uh_off ref, uint64_t slot_bytes)
{
	uint64_t obj = UH_REF_OFFSET(ref);
	struct uh_tx *t = &h->tx;
	int rc;

	if (t->doomed)
		return uh_err_set(t->doomed, "block was rolled back: %s", uh_strerror(t->doomed));
	if ((rc = log_append(h, UH_LE_ALLOC, obj, slot_bytes, NULL, 0, NULL)) != 0)
		return rc;
	t->last_obj = 0;
	if ((rc = u64map_put(&t->news, obj, slot_bytes)) != 0 ||
	    (rc = u64vec_push(&t->news_list, obj)) != 0)
		return tx_doom(h, uh_err_set(rc, "out of process memory"));
	return 0;
}

int uh_tx_log_free(uh_heap *h, uh_off ref)
{
	struct uh_tx *t = &h->tx;
	uint64_t obj = UH_REF_OFFSET(ref);
	int rc;

	if (t->doomed)
		return uh_err_set(t->doomed, "block was rolled back: %s", uh_strerror(t->doomed));
	if ((rc = uh_tx_lock(h, obj)) != 0)
		return rc;
	if ((rc = log_append(h, UH_LE_FREE, obj, 0, NULL, 0, NULL)) != 0)
		return rc;
	if ((rc = u64vec_push(&t->freed_list, obj)) != 0)
		return tx_doom(h, uh_err_set(rc, "out of process memory"));
	return 0;
}

static void store_field(char *dst, const void *src, uint32_t len)
{
	switch (len) {	/* aligned single stores: readers never see a torn value */
	case 1: __atomic_store_n((uint8_t *)dst, *(const uint8_t *)src, __ATOMIC_RELEASE); break;
	case 2: __atomic_store_n((uint16_t *)dst, *(const uint16_t *)src, __ATOMIC_RELEASE); break;
	case 4: __atomic_store_n((uint32_t *)dst, *(const uint32_t *)src, __ATOMIC_RELEASE); break;
	case 8: __atomic_store_n((uint64_t *)dst, *(const uint64_t *)src, __ATOMIC_RELEASE); break;
	default: memcpy(dst, src, len);
	}
}

int uh_tx_write_single(uh_heap *h, uh_off ref, uint64_t target, const void *src,
		       uint32_t len)
{
	uint64_t obj = UH_REF_OFFSET(ref);
	int rc;

	target = UH_REF_OFFSET(target);
	/* A one-entry block: the LOCK entry lets heapd release the lock if
	 * we die holding it; the store itself is atomic, so it needs no
	 * redo: it is either durable or not. On the session of the heapd
	 * that runs now (re-attach first if it changed). */
	if (uh_heapd_changed(h) && (rc = uh_reattach(h)) != 0)
		return rc;
	h->tx.depth = 1;
	h->tx.doomed = 0;
	if ((rc = uh_tx_lock(h, obj)) != 0) {
		h->tx.depth = 0;
		h->tx.doomed = 0;
		return rc;
	}
	/* APPLIED: readers must not take the bytes in place for the locked
	 * version any more; heapd, if we die, only releases the lock. */
	__atomic_store_n(&h->log->state, UH_LOG_APPLIED, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&h->hdr->heapd_starts, __ATOMIC_ACQUIRE) != h->starts) {
		/* A new heapd started meanwhile; it may be collecting garbage,
		 * with this session counted as quiet: store nothing. */
		tx_rollback(h);
		h->tx.depth = 0;
		h->tx.doomed = 0;
		return uh_tx_write_single(h, ref, target, src, len);
	}
	/* The store in a busy section: while the online collector marks, the
	 * word it overwrites goes grey first (gcring.c). */
	if (uh_gc_phase(uh_gc_enter(h)) == UH_GC_MARK)
		uh_gc_overwrite(h, h->base + target, src, len);
	store_field(h->base + target, src, len);
	uh_gc_leave(h);
	uh_flush(h, h->base + target, len);
	uh_barrier(h);	/* the store is durable */
	uint64_t version = __atomic_add_fetch(&h->hdr->clock, 1, __ATOMIC_ACQ_REL);
	struct uh_objhdr *o = (void *)(h->base + obj);
	__atomic_store_n(&o->lock, version, __ATOMIC_RELEASE);
	__atomic_store_n(&h->log->state, UH_LOG_IDLE, __ATOMIC_RELEASE);
	uh_notify_commit(h, &obj, 1);
	tx_reset(h);
	h->tx.depth = 0;
	return 0;
}

/* ---- public block calls ---- */

int uh_begin(uh_heap *h)
{
	int rc = uh_check_handle(h);
	if (rc)
		return rc;
	/* A block runs on a session of the heapd that runs now. */
	if (h->tx.depth == 0 && uh_heapd_changed(h) && (rc = uh_reattach(h)) != 0)
		return rc;
	/* Read-only handles run read-only blocks (a consistent snapshot);
	 * every write in them fails with UH_EREADONLY. */
	if (h->tx.depth == 0)
		uh_starve_wait(h);	/* a block that keeps losing goes first */
	if (h->tx.depth++ == 0) {
		h->tx.doomed = 0;
		h->tx.lost_on = 0;
		h->tx.rv = __atomic_load_n(&h->hdr->clock, __ATOMIC_ACQUIRE);
	}
	return 0;
}

/* The block is applied and durable in place: leave the log APPLIED for
 * the next barrier to persist (barrier.c), then release the locks with a
 * new version. */
static void commit_release(uh_heap *h)
{
	struct uh_tx *t = &h->tx;
	uint64_t version = __atomic_add_fetch(&h->hdr->clock, 1, __ATOMIC_ACQ_REL);

	__atomic_store_n(&h->log->state, UH_LOG_APPLIED, __ATOMIC_RELEASE);
	uh_flush(h, h->log, sizeof(*h->log));
	uh_lazy_mark(h);
	for (uint32_t i = 0; i < t->locked_list.n; i++) {	/* bound: locked */
		struct uh_objhdr *o = (void *)(h->base + t->locked_list.v[i]);
		__atomic_store_n(&o->lock, version, __ATOMIC_RELEASE);
	}
	/* The block's new objects (locked since allocated, alloc.c), before
	 * a slot freed in the block goes back below. */
	for (uint32_t i = 0; i < t->news_list.n; i++) {	/* bound: allocated */
		struct uh_objhdr *o = (void *)(h->base + t->news_list.v[i]);
		__atomic_store_n(&o->lock, version, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&h->log->state, UH_LOG_IDLE, __ATOMIC_RELEASE);
	uh_notify_commit(h, t->locked_list.v, t->locked_list.n);
	for (uint32_t i = 0; i < t->freed_list.n; i++)	/* bound: freed */
		release_slot(h, t->freed_list.v[i]);
	h->st.frees += t->freed_list.n;
}

/* Test hook UH_COMMIT_HOLD (uhint.h): a test holds this commit between
 * its validation and its apply, the window another session's write and a
 * collector cycle may fall into (test_gc_commit_window). Once per handle. */
static void commit_hold(uh_heap *h)
{
	char path[sizeof(h->commit_hold) + 4];

	snprintf(path, sizeof(path), "%s.in", h->commit_hold);
	int fd = open(path, O_WRONLY | O_CREAT, 0600);
	if (fd >= 0)
		close(fd);
	snprintf(path, sizeof(path), "%s.go", h->commit_hold);
	for (int i = 0; i < 30000 && access(path, F_OK) != 0; i++) {	/* bound: 30 s */
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	h->commit_hold[0] = 0;
}

static int tx_commit_outer(uh_heap *h)
{
	struct uh_tx *t = &h->tx;
	struct uh_log_hdr *log = h->log;
	struct uh_log_loc loc = { h->base, h->size, log, h->log_size, UH_FORMAT_VERSION };
	struct uh_log_counts c = { 0 };

	if (t->pos == 0) {
		/* Read-only: every read was of the snapshot rv; nothing to do. */
		h->st.empty_commits++;
		tx_reset(h);
		return 0;
	}
	/* The busy section (gcring.c) opens before the reads are validated,
	 * not just before the stores in place: the references this block
	 * stores are only known to be in the heap up to the validation, and
	 * another session may remove them from there right after it. While
	 * the online collector marks, that removal pushes them grey only if
	 * its own section began after ours loaded MARK, which holding the
	 * section from here on guarantees (FORMAT.md 9.3, why it is sound). */
	uint64_t gc = uh_gc_enter(h);
	/* All our locks are held: if every read is still current, the block
	 * serializes here. */
	if (!reads_valid(h, 1)) {
		uh_gc_leave(h);
		h->st.conflicts++;
		uh_gc_count(h, 1);
		h->st.aborts_stale++;
		tx_doom(h, 0);
		h->tx.doomed = 0;
		return uh_err_set(UH_ECONFLICT, "uh_commit: an object this block read was "
				  "changed by another session; block rolled back, run it again");
	}
	if (__builtin_expect(h->commit_hold[0] != 0, 0))
		commit_hold(h);
	/* heapd ended under the block: its session is for the next heapd to
	 * recover, not to commit on. */
	if (h->ctl && !uhc_connected(h->ctl)) {
		uh_gc_leave(h);
		uh_tx_heapd_restarted(h);
		h->tx.doomed = 0;
		return uh_err_set(UH_ECONFLICT, "uh_commit: heapd restarted: the block was rolled "
				  "back; run it again (the next block attaches anew)");
	}
	/* The block's place in replay order, taken with every lock held: a
	 * later block that takes one of our locks takes a larger one, so
	 * recovery replays lazy logs in this order (FORMAT.md 8.4). It is not
	 * the version the locks are released with: readers that find our
	 * locks with the log still ACTIVE read the old bytes, so that version
	 * must be taken after COMMITTED is visible (commit_release). */
	uint64_t order = __atomic_add_fetch(&h->hdr->clock, 1, __ATOMIC_ACQ_REL);
	/* B1: the block becomes durable: new objects, entries and header in
	 * one barrier; the checksum covers the new objects too, so a header
	 * that landed without them does not count as committed. */
	for (uint32_t i = 0; i < t->news_list.n; i++) {	/* bound: allocated */
		uint64_t obj = t->news_list.v[i];
		uh_flush(h, h->base + obj, *u64map_get(&t->news, obj));
	}
	uh_logchain_flush(h);
	log->seq = ++h->seq;
	log->nentries = t->nentries;
	log->version = order;
	log->checksum = uh_log_checksum(&loc, NULL);
	__atomic_store_n(&log->state, UH_LOG_COMMITTED, __ATOMIC_RELEASE);
	/* Readers that see our locks with the log still ACTIVE read the bytes
	 * in place as the old version: no apply store may pass this one. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	/* A heapd that started after the check above may be collecting
	 * garbage: either we see its start now and roll back, or it sees
	 * COMMITTED and waits for us (reattach.c). */
	if (__atomic_load_n(&h->hdr->heapd_starts, __ATOMIC_ACQUIRE) != h->starts) {
		uh_gc_leave(h);
		uh_tx_heapd_restarted(h);
		h->tx.doomed = 0;
		return uh_err_set(UH_ECONFLICT, "uh_commit: heapd restarted: the block was rolled "
				  "back; run it again (the next block attaches anew)");
	}
	uh_flush(h, log, sizeof(*log));
	uh_barrier(h);
	/* The stores in place run in the busy section opened above: while
	 * the online collector marks, what they overwrite goes grey first. */
	struct uh_persist p = h->persist;
	if (uh_gc_phase(gc) == UH_GC_MARK)
		p.overwrite = uh_gc_overwrite;
	/* B2: apply in place (uh_log_apply ends with the barrier). */
	int rc = uh_log_apply(&loc, &p, &c);
	uh_gc_leave(h);
	if (rc)
		return uh_err_set(rc, "uh_commit: own log failed to apply");
	commit_release(h);
	h->st.commits++;
	uh_gc_count(h, 0);
	tx_reset(h);
	uh_logchain_trim(h);
	return 0;
}

int uh_commit(uh_heap *h)
{
	int rc = uh_check_handle(h);
	if (rc)
		return rc;
	if (h->tx.depth == 0)
		return uh_err_set(UH_ESTATE, "uh_commit: no block is open");
	if (--h->tx.depth > 0)
		return h->tx.doomed ? uh_err_set(h->tx.doomed, "block was rolled back") : 0;
	if (h->tx.doomed) {
		rc = h->tx.doomed;
		h->tx.doomed = 0;
		return uh_err_set(rc, "uh_commit: block was rolled back (%s)", uh_strerror(rc));
	}
	rc = tx_commit_outer(h);
	if (rc != UH_ECONFLICT)
		uh_starve_release(h);	/* done, or failed for good: not retried */
	return rc;
}

int uh_abort(uh_heap *h)
{
	int rc = uh_check_handle(h);
	if (rc)
		return rc;
	if (h->tx.depth == 0)
		return uh_err_set(UH_ESTATE, "uh_abort: no block is open");
	if (!h->tx.doomed) {
		h->st.aborts++;
		h->st.aborts_user++;
	}
	tx_rollback(h);
	h->tx.depth = 0;
	h->tx.doomed = 0;
	return 0;
}

int uh_in_block(uh_heap *h)
{
	return h ? h->tx.depth : 0;
}

int uh_tx_begin_implicit(uh_heap *h, int *implicit)
{
	*implicit = h->tx.depth == 0;
	return *implicit ? uh_begin(h) : 0;
}

int uh_tx_end_implicit(uh_heap *h, int implicit, int rc)
{
	if (!implicit)
		return rc;
	if (rc == 0)
		return uh_commit(h);
	char msg[1024];
	snprintf(msg, sizeof(msg), "%s", uh_errmsg());
	uh_abort(h);
	return uh_err_set(rc, "%s", msg);
}

/* Sleep a random time in [0, us) microseconds: desynchronizes retries. */
static void backoff_sleep(uh_heap *h, long us)
{
	h->rng ^= h->rng << 13;
	h->rng ^= h->rng >> 7;
	h->rng ^= h->rng << 17;
	long ns = (long)(h->rng % (uint64_t)(us * 1000));
	struct timespec ts = { ns / 1000000000L, ns % 1000000000L };
	nanosleep(&ts, NULL);
}

int uh_retry_wait(uh_heap *h, unsigned tries)
{
	int rc = uh_check_handle(h);
	long us = 10;

	if (rc)
		return rc;
	if (tries == 0)
		return 0;
	h->st.retries++;
	if (uh_starve_claim(h, tries)) {
		/* Others hold back new blocks: retry as soon as the block
		 * that beat ours has released what ours lost on. */
		uh_starve_wait_lost_on(h);
		return 0;
	}
	for (unsigned i = 1; i < tries && us < 10000; i++)	/* bound: 10 doublings */
		us *= 2;
	backoff_sleep(h, us < 10000 ? us : 10000);
	return 0;
}

int uh_run(uh_heap *h, uh_block_fn fn, void *arg, unsigned max_tries)
{
	int rc = uh_check_handle(h);

	if (rc)
		return rc;
	if (!fn)
		return uh_err_set(UH_EINVAL, "uh_run: fn is NULL");
	if (h->tx.depth)
		return uh_err_set(UH_ESTATE, "uh_run: already inside a block; call fn directly");
	if (max_tries == 0)
		max_tries = 100;
	for (unsigned i = 0; i < max_tries; i++) {	/* bound: max_tries */
		uh_retry_wait(h, i);
		if ((rc = uh_begin(h)) != 0)
			return rc;
		rc = fn(h, arg);
		if (rc == 0) {
			rc = uh_commit(h);
			if (rc != UH_ECONFLICT)
				return rc;
			continue;
		}
		if (h->tx.depth) {
			char msg[1024];
			snprintf(msg, sizeof(msg), "%s", uh_errmsg());
			uh_abort(h);
			uh_err_set(rc, "%s", msg);
		}
		if (rc != UH_ECONFLICT)
			return rc;
	}
	char last[512];
	snprintf(last, sizeof(last), "%s", uh_errmsg());
	uh_starve_release(h);
	return uh_err_set(UH_ECONFLICT, "uh_run: gave up after %u tries, each lost to a "
			  "conflict with another session (the last: %s)", max_tries, last);
}
