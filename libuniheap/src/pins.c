/*
 * pins.c -- pins for the online garbage collector (FORMAT.md 9.3): the
 * GC file mapped, this session's area bound, uh_pin and uh_unpin.
 *
 * The GC file is mapped once per struct uh_mapping (sibling sessions
 * share it); each session writes only its own area. When heapd restarts
 * with another GC file, the re-attaching session maps the new one and the
 * old mapping is kept (gc_old) until the last session of the mapping
 * closes, as siblings may still be bound to it.
 *
 * Pin table (common/gcfile.h): entry id holds a reference (even,
 * nonzero) while pinned; a free entry is odd, (entry >> 1) being the next
 * free id + 1 (0 ends the list); 0 is an entry never used. Ids start at
 * 1, so 0 is never a pin: uh_pin gives 0 when heapd has no GC file, and
 * uh_unpin(0) does nothing (as does every unpin without a GC file).
 * A pin given out is the entry's id with the handle's pin tag in bits
 * 24..30: 0, raised in each forked child that attaches the handle anew
 * (uh_gc_forked). A pin of a lower tag is an ancestor process's, held by
 * a proxy the child inherited: releasing it in the child does nothing.
 *
 * Invariants, all under h->gc.lock (a finalizer thread may unpin while
 * the session's thread pins):
 *  - pin_hwm is raised before a new entry is stored, so the collector,
 *    which reads [0, pin_hwm), never misses a stored reference;
 *  - a pin stores its entry with a full fence before it loads gc_state
 *    and the object's lock word: either the sweep's scan of the pins
 *    (which follows its lock and a full fence) sees the entry, or the pin
 *    sees the sweep's lock and waits for its outcome;
 *  - an entry unpinned while the collector marks keeps its reference
 *    until that cycle's mark is over (ids in `deferred`, bits in
 *    deferred_bits): the mark may have read the pin table already and
 *    relies on what it found there until the sweep;
 *  - sess->pins counts the entries holding a reference (deferred ones
 *    too), h->st.pins the pins given out and not unpinned;
 *  - a re-attach holds h->gc.lock from before its Attach call until the
 *    session is bound to its new area (uh_gc_hold, reattach.c): heapd
 *    copies the old area's pins into the new one in that call, then
 *    frees the old slot, which another session may take (and its area
 *    be zeroed) at once; so nothing of this handle writes the old area
 *    after heapd's copy, and nothing reads it after the call, unless it
 *    lies in another GC file than the new area (the one a previous
 *    heapd made), which nobody reuses.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "uhint.h"

#define PIN_TAG_SHIFT 24	/* UH_GC_PIN_CAP is 1 << 24 */
#define PIN_TAG_MAX 127u	/* ids stay below 1 << 31 */

struct uh_gc_oldmap {
	char *base;
	uint64_t size;
	struct uh_gc_oldmap *next;
};

static void spin_lock(int *l)
{
	/* bounded by the holder: a few table stores, or a re-attach's
	 * Attach call (uh_gc_hold), never a wait on another session */
	while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE)) {
		while (__atomic_load_n(l, __ATOMIC_RELAXED))
			sched_yield();
	}
}

static void spin_unlock(int *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

/* ---- the GC file ---- */

static int check_file(const struct uh_gc_filehdr *g, uint64_t size, const char *path)
{
	if (__atomic_load_n(&g->magic, __ATOMIC_ACQUIRE) != UH_GC_MAGIC ||
	    g->version != UH_GC_FILE_VERSION || g->ring_cap != UH_GC_RING_CAP ||
	    g->area_size != UH_GC_AREA_SIZE || g->pin_off != UH_GC_PIN_OFF ||
	    g->pin_cap != UH_GC_PIN_CAP || g->session_cap == 0 ||
	    size != UH_GC_FILE_SIZE(g->session_cap))
		return uh_err_set(UH_EPROTO, "%s is not a GC file this libuniheap reads", path);
	return 0;
}

/* Map the GC file at path into m, unless m maps that very file already. */
static int map_locked(struct uh_mapping *m, const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return uh_err_set(UH_EIO, "cannot find the GC file %s: %s", path,
				  strerror(errno));
	if (m->gc_base && m->gc_dev == (uint64_t)st.st_dev && m->gc_ino == (uint64_t)st.st_ino)
		return 0;
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return uh_err_set(UH_EIO, "cannot open the GC file %s: %s", path,
				  strerror(errno));
	if (fstat(fd, &st) != 0) {
		close(fd);
		return uh_err_set(UH_EIO, "cannot stat the GC file %s", path);
	}
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return uh_err_set(UH_EIO, "cannot map the GC file %s: %s", path,
				  strerror(errno));
	int rc = check_file(p, (uint64_t)st.st_size, path);
	struct uh_gc_oldmap *old = NULL;
	if (!rc && m->gc_base && !(old = malloc(sizeof(*old))))
		rc = uh_err_set(UH_ENOMEM, "out of memory");
	if (rc) {
		munmap(p, (size_t)st.st_size);
		return rc;
	}
	if (old) {
		*old = (struct uh_gc_oldmap){ m->gc_base, m->gc_size, m->gc_old };
		m->gc_old = old;
	}
	m->gc_base = p;
	m->gc_size = (uint64_t)st.st_size;
	m->gc_dev = (uint64_t)st.st_dev;
	m->gc_ino = (uint64_t)st.st_ino;
	return 0;
}

/* Map (if needed) and bind h->gc to session's area. */
static int bind_area(uh_heap *h, const char *path, uint32_t session)
{
	struct uh_mapping *m = h->m;
	spin_lock(&m->gc_lock);
	int rc = map_locked(m, path);
	const struct uh_gc_filehdr *g = (const struct uh_gc_filehdr *)m->gc_base;
	if (!rc && (session == 0 || session >= g->session_cap))
		rc = uh_err_set(UH_EPROTO, "session %u has no area in the GC file %s", session,
				path);
	char *area = rc ? NULL : m->gc_base + UH_GC_AREA_OFF(session);
	spin_unlock(&m->gc_lock);
	if (rc)
		return rc;
	h->gc.file = (const struct uh_gc_filehdr *)m->gc_base;
	h->gc.sess = (struct uh_gc_sess *)area;
	h->gc.ring = (uint64_t *)(area + sizeof(struct uh_gc_sess));
	h->gc.pins = (uint64_t *)(area + UH_GC_PIN_OFF);
	h->gc.known.cycle = 0;	/* pushes into another area say nothing of this one */
	/* Asks for space before this attach were answered by the sessions
	 * then (leases.c): this one owes nothing to them. */
	h->space_answered = __atomic_load_n(&h->gc.file->space_asked, __ATOMIC_ACQUIRE);
	return 0;
}

int uh_gc_attach(uh_heap *h, const char *gc_path, uint32_t session)
{
	if (!gc_path || !gc_path[0])
		return 0;	/* a heapd without a GC file: pins are no-ops */
	int rc = bind_area(h, gc_path, session);
	if (rc)
		return rc;
	/* heapd zeroed the area when it gave us the slot; id 0 stays unused. */
	__atomic_store_n(&h->gc.sess->pin_hwm, 1, __ATOMIC_RELEASE);
	return 0;
}

/* While the collector marks, the pins copied in are greyed, as uh_pin
 * does for one. */
static void grey_pins(uh_heap *h, uint64_t hwm)
{
	uint64_t st = __atomic_load_n(&h->hdr->gc_state, __ATOMIC_SEQ_CST);
	if (uh_gc_phase(st) != UH_GC_MARK)
		return;
	if (uh_gc_phase(uh_gc_enter(h)) == UH_GC_MARK) {
		for (uint64_t i = 1; i < hwm; i++) {	/* bounded by pin_hwm */
			uint64_t e = h->gc.pins[i];
			if (e && !(e & 1))
				uh_gc_grey(h, e);
		}
	}
	uh_gc_leave(h);
}

void uh_gc_hold(uh_heap *h)
{
	spin_lock(&h->gc.lock);
}

void uh_gc_unhold(uh_heap *h)
{
	spin_unlock(&h->gc.lock);
}

int uh_gc_reattach(uh_heap *h, const char *gc_path, uint32_t old_session,
		   uint32_t new_session)
{
	(void)old_session;	/* h->gc still points at its area */
	struct uh_gc_client *g = &h->gc;
	struct uh_gc_sess *old = g->sess;
	uint64_t *old_pins = g->pins;
	const void *old_file = g->file;
	int rc = 0;
	if (!gc_path || !gc_path[0]) {
		/* The new heapd has no GC file: nothing is collected online. */
		g->sess = NULL;
		g->ring = g->pins = NULL;
		goto out;
	}
	if ((rc = bind_area(h, gc_path, new_session)) != 0) {
		g->sess = NULL;
		g->ring = g->pins = NULL;
		goto out;
	}
	uint64_t hwm;
	if (old && old_file == g->file) {
		/* One file: heapd copied the pins in the Attach call (held:
		 * nothing changed them since), and the old slot may be
		 * another session's already. */
		hwm = __atomic_load_n(&g->sess->pin_hwm, __ATOMIC_ACQUIRE);
	} else {
		/* The old area is in the file of a heapd that has gone:
		 * heapd could not copy from it, nobody else writes it. */
		hwm = old ? __atomic_load_n(&old->pin_hwm, __ATOMIC_ACQUIRE) : 1;
		if (hwm < 1 || hwm > UH_GC_PIN_CAP)
			hwm = 1;
		for (uint64_t i = 1; i < hwm; i++)	/* bounded by pin_hwm */
			__atomic_store_n(&g->pins[i], old_pins[i], __ATOMIC_RELAXED);
		__atomic_store_n(&g->sess->pins, old ? old->pins : 0, __ATOMIC_RELAXED);
		__atomic_store_n(&g->sess->pin_hwm, hwm, __ATOMIC_RELEASE);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	}
	if (hwm < 1 || hwm > UH_GC_PIN_CAP)
		hwm = 1;
	grey_pins(h, hwm);
out:
	return rc;
}

void uh_gc_detach(uh_heap *h)
{
	/* heapd zeroes the area once it has reaped the session. */
	h->gc.sess = NULL;
	h->gc.file = NULL;
	h->gc.ring = h->gc.pins = NULL;
	free(h->gc.deferred.v);
	h->gc.deferred = (struct u64vec){ 0 };
	free(h->gc.deferred_bits);
	h->gc.deferred_bits = NULL;
	h->gc.deferred_words = 0;
}

void uh_gc_unmap(struct uh_mapping *m)
{
	if (m->gc_base)
		munmap(m->gc_base, m->gc_size);
	m->gc_base = NULL;
	while (m->gc_old) {	/* bounded: one per heapd restart */
		struct uh_gc_oldmap *o = m->gc_old;
		m->gc_old = o->next;
		munmap(o->base, o->size);
		free(o);
	}
}

void uh_gc_forked(uh_heap *h, int mapping_too)
{
	struct uh_gc_client *g = &h->gc;
	uint32_t tag = g->pin_tag;

	/* Single-threaded as far as h is concerned (handle.c's lock, every
	 * user of the locks checked h first): a lock held at the fork was a
	 * parent thread's. */
	if (mapping_too)
		__atomic_store_n(&h->m->gc_lock, 0, __ATOMIC_RELEASE);
	uh_gc_detach(h);
	memset(g, 0, sizeof(*g));
	g->pin_tag = tag < PIN_TAG_MAX ? tag + 1 : tag;
}

/* ---- the nursery ---- */

/* Only the handle's own thread allocates: no lock. The old entry goes
 * grey before it is overwritten while the collector marks, inside a busy
 * section (the mark's end waits for it), as a deferred unpin would keep
 * it; a stale IDLE seen here is as harmless as in uh_unpin. */
void uh_gc_nursery_add(uh_heap *h, uh_off ref)
{
	struct uh_gc_client *g = &h->gc;
	if (!g->sess)
		return;
	uint64_t *n = (uint64_t *)((char *)g->sess + UH_GC_NURSERY_OFF);
	uint32_t i = g->nursery_next++ % UH_GC_NURSERY;
	uint64_t old = __atomic_load_n(&n[i], __ATOMIC_RELAXED);
	uint64_t st = __atomic_load_n(&h->hdr->gc_state, __ATOMIC_SEQ_CST);
	if (old && uh_gc_phase(st) == UH_GC_MARK) {
		if (uh_gc_phase(uh_gc_enter(h)) == UH_GC_MARK)
			uh_gc_grey(h, old);
		__atomic_store_n(&n[i], ref, __ATOMIC_RELEASE);
		uh_gc_leave(h);
		return;
	}
	__atomic_store_n(&n[i], ref, __ATOMIC_RELEASE);
}

/* ---- the pin table ---- */

static uint64_t gc_state(uh_heap *h)
{
	return __atomic_load_n(&h->hdr->gc_state, __ATOMIC_SEQ_CST);
}

static void free_entry(uh_heap *h, uint64_t id)
{
	struct uh_gc_client *g = &h->gc;
	__atomic_store_n(&g->pins[id], (g->free_head << 1) | 1, __ATOMIC_RELEASE);
	g->free_head = id + 1;
	__atomic_store_n(&g->sess->pins, g->sess->pins - 1, __ATOMIC_RELAXED);
}

static int is_deferred(const struct uh_gc_client *g, uint64_t id)
{
	return id / 64 < g->deferred_words && (g->deferred_bits[id / 64] >> (id % 64) & 1);
}

static int defer_entry(uh_heap *h, uint64_t id, uint64_t state)
{
	struct uh_gc_client *g = &h->gc;
	if (id / 64 >= g->deferred_words) {
		uint64_t words = (__atomic_load_n(&g->sess->pin_hwm, __ATOMIC_RELAXED) + 63) / 64;
		words = words * 2 > id / 64 + 1 ? words * 2 : id / 64 + 1;
		uint64_t *b = realloc(g->deferred_bits, words * 8);
		if (!b)
			return UH_ENOMEM;
		memset(b + g->deferred_words, 0, (words - g->deferred_words) * 8);
		g->deferred_bits = b;
		g->deferred_words = words;
	}
	if (u64vec_push(&g->deferred, id))
		return UH_ENOMEM;
	g->deferred_bits[id / 64] |= 1ull << (id % 64);
	g->deferred_cycle = uh_gc_cycle(state);
	return 0;
}

/* Entries unpinned during a mark that is now over are freed. */
static void release_deferred(uh_heap *h, uint64_t state)
{
	struct uh_gc_client *g = &h->gc;
	if (!g->deferred.n ||
	    (uh_gc_phase(state) == UH_GC_MARK && uh_gc_cycle(state) == g->deferred_cycle))
		return;
	for (size_t i = 0; i < g->deferred.n; i++) {	/* bounded by n */
		uint64_t id = g->deferred.v[i];
		g->deferred_bits[id / 64] &= ~(1ull << (id % 64));
		free_entry(h, id);
	}
	g->deferred.n = 0;
}

/* A free id, or UH_GC_PIN_CAP when the table is full. */
static uint64_t take_entry(struct uh_gc_client *g)
{
	if (g->free_head) {
		uint64_t id = g->free_head - 1;
		g->free_head = g->pins[id] >> 1;
		return id;
	}
	uint64_t id = __atomic_load_n(&g->sess->pin_hwm, __ATOMIC_RELAXED);
	if (id >= UH_GC_PIN_CAP)
		return UH_GC_PIN_CAP;
	/* Raised before the entry is used: the collector reads below it. */
	__atomic_store_n(&g->sess->pin_hwm, id + 1, __ATOMIC_SEQ_CST);
	return id;
}

/* The object's slot, or NULL with UH_EFREED set (not an object here). */
static struct uh_objhdr *slot_of(uh_heap *h, uh_off ref, int *rc)
{
	uint32_t slot;
	if (ref == 0 || !uh_arena_slot_of(&h->ix, UH_REF_OFFSET(ref), &slot)) {
		*rc = uh_err_set(UH_EFREED, "reference %llu names no object of this heap",
				 (unsigned long long)ref);
		return NULL;
	}
	return (struct uh_objhdr *)(h->base + UH_REF_OFFSET(ref));
}

/* After the pin is visible: the sweep may hold the object's lock (it
 * freed or rescues it); wait for its outcome, then check the object. */
static int check_pinned(uh_heap *h, struct uh_objhdr *o, uh_off ref)
{
	uint32_t gcs = __atomic_load_n(&h->hdr->gc_session, __ATOMIC_ACQUIRE);
	uint64_t w = __atomic_load_n(&o->lock, __ATOMIC_SEQ_CST);
	if (gcs && uh_lock_is_locked(w) && uh_lock_owner(w) == gcs) {
		h->st.gc_pin_waits++;
		int64_t t0 = uh_gc_wait_begin();
		/* bounded by the sweep's batch: it releases every lock it takes */
		while (uh_lock_is_locked(w) && uh_lock_owner(w) == gcs) {
			sched_yield();
			w = __atomic_load_n(&o->lock, __ATOMIC_SEQ_CST);
		}
		uh_gc_wait_end(h, t0);
	}
	uint32_t size = __atomic_load_n(&o->size, __ATOMIC_ACQUIRE);
	uint32_t word = __atomic_load_n(&o->class_word, __ATOMIC_ACQUIRE);
	if (!(size & UH_OBJ_VALID) || uh_word_gen(word) != UH_REF_GEN(ref) ||
	    uh_word_class(word) == 0)
		return uh_err_set(UH_EFREED, "object at %llu has been freed",
				  (unsigned long long)UH_REF_OFFSET(ref));
	return 0;
}

/* The pin is stored (full fence); while the collector marks, its
 * object goes grey, inside a busy section so that heapd's handshake at
 * the end of the mark waits for the push. */
static void grey_if_marking(uh_heap *h, uh_off ref)
{
	uint64_t st = gc_state(h);
	if (uh_gc_phase(st) != UH_GC_MARK)
		return;
	if (uh_gc_phase(uh_gc_enter(h)) == UH_GC_MARK)
		uh_gc_grey(h, ref);
	uh_gc_leave(h);
}

int uh_pin(uh_heap *h, uh_off obj, uint32_t *pin)
{
	int rc = uh_check_handle(h);
	if (rc)
		return rc;
	if (!pin)
		return uh_err_set(UH_EINVAL, "uh_pin: pin is NULL");
	*pin = 0;
	struct uh_objhdr *o = slot_of(h, obj, &rc);
	if (!o)
		return rc;
	struct uh_gc_client *g = &h->gc;
	spin_lock(&g->lock);
	if (!g->sess) {
		spin_unlock(&g->lock);
		return check_pinned(h, o, obj);	/* no GC file: nothing to hold */
	}
	release_deferred(h, gc_state(h));
	uint64_t id = take_entry(g);
	if (id == UH_GC_PIN_CAP) {
		spin_unlock(&g->lock);
		return uh_err_set(UH_ENOSPC, "uh_pin: this session holds %u pins already",
				  UH_PIN_MAX - 1);
	}
	__atomic_exchange_n(&g->pins[id], obj, __ATOMIC_SEQ_CST);
	__atomic_store_n(&g->sess->pins, g->sess->pins + 1, __ATOMIC_RELAXED);
	grey_if_marking(h, obj);
	rc = check_pinned(h, o, obj);
	if (rc) {
		free_entry(h, id);	/* freed: the collector needs no pin of it */
	} else {
		*pin = (uint32_t)id | g->pin_tag << PIN_TAG_SHIFT;
		h->st.pins++;
	}
	spin_unlock(&g->lock);
	return rc;
}

int uh_unpin(uh_heap *h, uint32_t pin)
{
	int rc = uh_check_handle(h);
	if (rc)
		return rc;
	if (pin == 0)
		return 0;	/* the pin of a session without a GC file */
	struct uh_gc_client *g = &h->gc;
	if (pin >> PIN_TAG_SHIFT < g->pin_tag)
		return 0;	/* an ancestor's pin (the tag's comment above) */
	if (pin >> PIN_TAG_SHIFT > g->pin_tag)
		return uh_err_set(UH_EINVAL, "uh_unpin: %u is not a pin of this session", pin);
	pin &= UH_GC_PIN_CAP - 1;
	spin_lock(&g->lock);
	if (!g->sess) {
		/* No GC file (any more: a heapd without one took over): no
		 * pin holds anything. */
		spin_unlock(&g->lock);
		return 0;
	}
	uint64_t e = 0;
	if (pin < __atomic_load_n(&g->sess->pin_hwm, __ATOMIC_RELAXED))
		e = g->pins[pin];
	if (!e || (e & 1) || is_deferred(g, pin)) {
		spin_unlock(&g->lock);
		return uh_err_set(UH_EINVAL, "uh_unpin: %u is not a pin of this session", pin);
	}
	uint64_t st = gc_state(h);
	release_deferred(h, st);
	if (uh_gc_phase(st) == UH_GC_MARK)
		rc = defer_entry(h, pin, st);
	else
		free_entry(h, pin);
	if (!rc)
		h->st.pins--;
	spin_unlock(&g->lock);
	return rc ? uh_err_set(rc, "uh_unpin: out of memory") : 0;
}
