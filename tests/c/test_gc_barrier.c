/*
 * test_gc_barrier.c -- the client's side of the online collector's write
 * barrier (FORMAT.md 9.3, libuniheap/src/gcring.c), with a real heapd:
 *  - while hdr->gc_state says MARK (stored here through the mapping, as
 *    heapd's collector would), the reference a commit overwrites, the one
 *    a map and a sorted-map put replace, the references in the payload of
 *    an object a FREE frees, and the one a single field write overwrites
 *    each land in the session's grey ring, and the session's busy line is
 *    clear between calls with `seen` the state it read;
 *  - with the state IDLE nothing is pushed;
 *  - an object allocated once the mark has begun (the GC file's
 *    mark_begun) is not pushed in that cycle (neither its overwrite nor
 *    its pin), but in the next; one allocated under MARK before is;
 *  - a full ring (heapd not draining) makes a push wait a bounded time,
 *    then set `overflow` and drop: the commit still succeeds; the next
 *    cycle's first busy section clears `overflow`;
 *  - an object allocated inside a block is locked by its session until
 *    the block ends: commit unlocks it with the commit's version, a
 *    rollback frees it and unlocks it with a newer version; heapd, reaping
 *    a client that died in either place, releases it too.
 * Without a GC file (a heapd that maps none) the session's area is a
 * private buffer bound here instead; the client code is the same.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format.h"
#include "gcfile.h"
#include "harness.h"
#include "uhint.h"

static const char *SUITE = "test_gc_barrier";

static uint32_t holder_cls;	/* GcHolder: ref a, ref b, i64 n */
static void *private_area;	/* the session's area when no GC file is mapped */

static void setup(uh_heap *h)
{
	static const uh_field_spec f[] = {
		{ "a", UH_T_REF, 0 }, { "b", UH_T_REF, 0 }, { "n", UH_T_I64, 0 },
	};

	TH_CHECK_RC(uh_class_register(h, "GcHolder", f, 3, &holder_cls));
	if (!h->gc.sess) {
		private_area = calloc(1, sizeof(struct uh_gc_sess) + 8ull * UH_GC_RING_CAP);
		TH_CHECK(private_area != NULL);
		h->gc.sess = private_area;
		h->gc.ring = (uint64_t *)((char *)private_area + sizeof(struct uh_gc_sess));
	}
}

static void teardown(uh_heap *h)
{
	__atomic_store_n(&h->hdr->gc_state, uh_gc_state_make(0, UH_GC_IDLE), __ATOMIC_SEQ_CST);
	if (private_area) {
		h->gc.sess = NULL;
		h->gc.ring = NULL;
		free(private_area);
		private_area = NULL;
	}
}

static void set_state(uh_heap *h, uint64_t cycle, uint32_t phase)
{
	__atomic_store_n(&h->hdr->gc_state, uh_gc_state_make(cycle, phase), __ATOMIC_SEQ_CST);
}

/* Whether the ring holds ref (its offset) among the entries pushed since
 * head was from. */
static int ring_has(uh_heap *h, uint64_t from, uh_off ref)
{
	uint64_t head = __atomic_load_n(&h->gc.sess->head, __ATOMIC_ACQUIRE);

	for (uint64_t i = from; i < head; i++)	/* bound: entries pushed */
		if (UH_REF_OFFSET(h->gc.ring[i % UH_GC_RING_CAP]) == UH_REF_OFFSET(ref))
			return 1;
	return 0;
}

static uh_off new_holder(uh_heap *h)
{
	uh_off o = 0;

	TH_CHECK_RC(uh_alloc(h, holder_cls, &o));
	return o;
}

static uh_off new_string(uh_heap *h, const char *s)
{
	uh_off o = 0;

	TH_CHECK_RC(uh_string_new(h, s, strlen(s), &o));
	return o;
}

static int set_in_block(uh_heap *h, uh_off obj, uint32_t field, uh_off v)
{
	int rc = uh_begin(h);

	if (rc == 0)
		rc = uh_set_ref(h, obj, field, v);
	return rc ? rc : uh_commit(h);
}

static uh_value ref_value(uh_off ref)
{
	uh_value v = { .type = UH_T_STRING };

	v.u.ref = ref;
	return v;
}

static void test_idle_pushes_nothing(uh_heap *h)
{
	struct uh_gc_sess *s = h->gc.sess;
	uh_off o = new_holder(h), a = new_string(h, "a"), b = new_string(h, "b");

	set_state(h, 5, UH_GC_IDLE);
	TH_CHECK_RC(set_in_block(h, o, 0, a));
	uint64_t head = s->head, greys = h->st.gc_greys;
	TH_CHECK_RC(set_in_block(h, o, 0, b));
	TH_CHECK_RC(uh_set_ref(h, o, 0, a));
	TH_CHECK_RC(uh_free(h, o));
	TH_CHECK_EQ(s->head, head);
	TH_CHECK_EQ(h->st.gc_greys, greys);
	TH_CHECK_EQ(s->busy, 0);
	TH_CHECK_EQ(s->seen, uh_gc_state_make(5, UH_GC_IDLE));
	TH_CHECK_EQ(h->gc.busy_depth, 0);
}

static void test_mark_commit_and_single(uh_heap *h)
{
	struct uh_gc_sess *s = h->gc.sess;
	uh_off o = new_holder(h), a = new_string(h, "a"), b = new_string(h, "b");
	uh_off c = new_string(h, "c");
	uint64_t cycles = h->st.gc_cycles;

	TH_CHECK_RC(uh_root_set(h, "gc.holder", o));
	TH_CHECK_RC(set_in_block(h, o, 0, a));
	set_state(h, 9, UH_GC_MARK);
	uint64_t from = s->head;
	TH_CHECK_RC(set_in_block(h, o, 0, b));	/* a commit overwrites a */
	TH_CHECK(ring_has(h, from, a));
	TH_CHECK(!ring_has(h, from, b));
	TH_CHECK_EQ(s->seen, uh_gc_state_make(9, UH_GC_MARK));
	TH_CHECK_EQ(s->busy, 0);
	from = s->head;
	TH_CHECK_RC(uh_set_ref(h, o, 0, c));	/* a single write overwrites b */
	TH_CHECK(ring_has(h, from, b));
	TH_CHECK_EQ(s->busy, 0);
	/* One cycle seen, however many sections saw it. */
	TH_CHECK_EQ(h->st.gc_cycles, cycles + 1);
	set_state(h, 10, UH_GC_MARK);
	TH_CHECK_RC(uh_set_ref(h, o, 0, a));
	TH_CHECK_EQ(h->st.gc_cycles, cycles + 2);
	/* An unchanged word removes nothing: not pushed. */
	from = s->head;
	TH_CHECK_RC(uh_set_ref(h, o, 0, a));
	TH_CHECK_EQ(s->head, from);
	set_state(h, 10, UH_GC_IDLE);
}

static void test_mark_free(uh_heap *h)
{
	struct uh_gc_sess *s = h->gc.sess;
	uh_off o = new_holder(h), a = new_string(h, "fa"), b = new_string(h, "fb");

	TH_CHECK_RC(set_in_block(h, o, 0, a));
	TH_CHECK_RC(set_in_block(h, o, 1, b));
	set_state(h, 11, UH_GC_MARK);
	uint64_t from = s->head;
	TH_CHECK_RC(uh_free(h, o));	/* its payload's references die */
	TH_CHECK(ring_has(h, from, a));
	TH_CHECK(ring_has(h, from, b));
	set_state(h, 11, UH_GC_IDLE);
}

static void test_mark_map_puts(uh_heap *h)
{
	struct uh_gc_sess *s = h->gc.sess;
	uh_off m = 0, sm = 0, a = new_string(h, "ma"), b = new_string(h, "mb");
	uh_off c = new_string(h, "sa"), d = new_string(h, "sb");
	uh_key k = { .kind = UH_KEY_STRING, .data = "key", .len = 3 };
	uh_value va = ref_value(a), vb = ref_value(b), vc = ref_value(c), vd = ref_value(d);

	TH_CHECK_RC(uh_map_new(h, UH_KEY_STRING, &m));
	TH_CHECK_RC(uh_smap_new(h, UH_KEY_STRING, &sm));
	TH_CHECK_RC(uh_root_set(h, "gc.map", m));
	TH_CHECK_RC(uh_root_set(h, "gc.smap", sm));
	TH_CHECK_RC(uh_map_put(h, m, &k, &va, 0));
	TH_CHECK_RC(uh_smap_put(h, sm, &k, &vc, 0));
	set_state(h, 12, UH_GC_MARK);
	uint64_t from = s->head;
	TH_CHECK_RC(uh_map_put(h, m, &k, &vb, 0));	/* replaces a */
	TH_CHECK(ring_has(h, from, a));
	from = s->head;
	TH_CHECK_RC(uh_smap_put(h, sm, &k, &vd, 0));	/* replaces c */
	TH_CHECK(ring_has(h, from, c));
	set_state(h, 12, UH_GC_IDLE);
}

/* The GC file's mark_begun, as heapd's collector stores it after H1. */
static void set_mark_begun(uh_heap *h, uint64_t cycle)
{
	struct uh_gc_filehdr *g = (struct uh_gc_filehdr *)h->gc.file;

	__atomic_store_n(&g->mark_begun, cycle, __ATOMIC_SEQ_CST);
}

/* Objects allocated once the mark of a cycle has begun (H1 over: the GC
 * file's mark_begun) are not pushed in that cycle (their version keeps
 * them, FORMAT.md 9.3): not when a reference to them is overwritten, not
 * when they are pinned. One allocated while the state is MARK but before
 * H1 is over still is, as is one allocated before; in the next cycle
 * they are old objects like any other. */
static void test_mark_fresh_objects(uh_heap *h)
{
	struct uh_gc_sess *s = h->gc.sess;
	uh_off o = new_holder(h), old = new_string(h, "old"), inblock = 0;
	uint32_t pin = 0;

	TH_CHECK(h->gc.file != NULL);	/* heapd maps a GC file here */
	if (!h->gc.file)
		return;
	TH_CHECK_RC(set_in_block(h, o, 0, old));
	set_state(h, 15, UH_GC_MARK);	/* H1 not over yet */
	uh_off early = new_string(h, "early");
	TH_CHECK_RC(set_in_block(h, o, 1, early));
	set_mark_begun(h, 15);
	uh_off fresh = new_string(h, "fresh");	/* outside a block */
	uint64_t from = s->head;
	TH_CHECK_RC(set_in_block(h, o, 0, fresh));	/* overwrites old */
	TH_CHECK(ring_has(h, from, old));
	TH_CHECK_RC(set_in_block(h, o, 1, old));	/* overwrites early */
	TH_CHECK(ring_has(h, from, early));
	from = s->head;
	TH_CHECK_RC(uh_begin(h));	/* inside a block, overwriting fresh */
	TH_CHECK_RC(uh_string_new(h, "in block", 8, &inblock));
	TH_CHECK_RC(uh_set_ref(h, o, 0, inblock));
	TH_CHECK_RC(uh_commit(h));
	TH_CHECK(!ring_has(h, from, fresh));
	TH_CHECK_RC(uh_set_ref(h, o, 0, old));	/* overwrites inblock */
	TH_CHECK(!ring_has(h, from, inblock));
	TH_CHECK_RC(uh_pin(h, fresh, &pin));
	TH_CHECK(!ring_has(h, from, fresh));
	TH_CHECK_RC(uh_unpin(h, pin));
	/* Cycle 16: fresh and inblock are old objects now. */
	TH_CHECK_RC(uh_set_ref(h, o, 0, inblock));
	set_state(h, 15, UH_GC_IDLE);
	set_mark_begun(h, 0);
	set_state(h, 16, UH_GC_MARK);
	set_mark_begun(h, 16);
	from = s->head;
	TH_CHECK_RC(uh_set_ref(h, o, 0, fresh));	/* overwrites inblock */
	TH_CHECK(ring_has(h, from, inblock));
	set_state(h, 16, UH_GC_IDLE);
	set_mark_begun(h, 0);
}

/* heapd drains nothing here: a full ring stays full. */
static void test_full_ring(uh_heap *h)
{
	struct uh_gc_sess *s = h->gc.sess;
	uh_off o = new_holder(h), a = new_string(h, "ra"), b = new_string(h, "rb");
	uint64_t head = s->head, waits = h->st.gc_busy_waits;

	TH_CHECK_RC(set_in_block(h, o, 0, a));
	set_state(h, 13, UH_GC_MARK);
	s->head = __atomic_load_n(&s->tail, __ATOMIC_ACQUIRE) + UH_GC_RING_CAP;
	uint64_t full = s->head;
	TH_CHECK_RC(set_in_block(h, o, 0, b));	/* waits, then drops a */
	TH_CHECK_EQ(s->overflow, 1);
	TH_CHECK_EQ(s->head, full);
	TH_CHECK_EQ(h->st.gc_busy_waits, waits + 1);
	TH_CHECK_RC(uh_set_ref(h, o, 0, a));	/* the cycle is lost: no second wait */
	TH_CHECK_EQ(h->st.gc_busy_waits, waits + 1);
	TH_CHECK_EQ(s->busy, 0);
	set_state(h, 13, UH_GC_IDLE);
	s->head = head;
	/* The next cycle's first section clears the overflow of this one. */
	set_state(h, 14, UH_GC_MARK);
	uint64_t from = s->head;
	TH_CHECK_RC(uh_set_ref(h, o, 0, b));
	TH_CHECK_EQ(s->overflow, 0);
	TH_CHECK(ring_has(h, from, a));
	set_state(h, 14, UH_GC_IDLE);
}

static uint64_t lock_word(uh_heap *h, uh_off ref)
{
	const struct uh_objhdr *o = (const void *)(h->base + UH_REF_OFFSET(ref));

	return __atomic_load_n(&o->lock, __ATOMIC_ACQUIRE);
}

static int is_valid(uh_heap *h, uh_off ref)
{
	const struct uh_objhdr *o = (const void *)(h->base + UH_REF_OFFSET(ref));

	return (__atomic_load_n(&o->size, __ATOMIC_ACQUIRE) & UH_OBJ_VALID) != 0;
}

static void test_new_objects_locked(uh_heap *h)
{
	uh_off o = new_holder(h), n = 0, f = 0, r = 0;
	int64_t v = 0;

	/* Outside a block: unlocked, as ever. */
	TH_CHECK(!uh_lock_is_locked(lock_word(h, o)));
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_alloc(h, holder_cls, &n));
	TH_CHECK_RC(uh_alloc(h, holder_cls, &f));
	uint64_t w = lock_word(h, n);
	TH_CHECK(uh_lock_is_locked(w));
	TH_CHECK_EQ(uh_lock_owner(w), h->session);
	/* The block uses its new objects as before. */
	TH_CHECK_RC(uh_set_i64(h, n, 2, 42));
	TH_CHECK_RC(uh_get_i64(h, n, 2, &v));
	TH_CHECK_EQ(v, 42);
	TH_CHECK_RC(uh_set_ref(h, o, 0, n));	/* locks o */
	TH_CHECK_RC(uh_free(h, f));	/* new and freed in one block */
	TH_CHECK_RC(uh_commit(h));
	w = lock_word(h, n);
	TH_CHECK(!uh_lock_is_locked(w));
	TH_CHECK_EQ(w, lock_word(h, o));	/* the commit's version */
	TH_CHECK(!uh_lock_is_locked(lock_word(h, f)));
	TH_CHECK(!is_valid(h, f));
	TH_CHECK_RC(uh_get_i64(h, n, 2, &v));
	TH_CHECK_EQ(v, 42);

	/* Rolled back: freed, unlocked with a version newer than the clock
	 * when the block began. */
	uint64_t before = __atomic_load_n(&h->hdr->clock, __ATOMIC_ACQUIRE);
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_alloc(h, holder_cls, &r));
	TH_CHECK(uh_lock_is_locked(lock_word(h, r)));
	TH_CHECK_RC(uh_abort(h));
	w = lock_word(h, r);
	TH_CHECK(!uh_lock_is_locked(w));
	TH_CHECK(w > before);
	TH_CHECK(!is_valid(h, r));
	uint32_t cls;
	TH_CHECK_ERR(uh_obj_class(h, r, &cls), UH_EFREED);
}

static int read_ref_file(const char *dir, const char *name, uh_off *out)
{
	char path[700], buf[64] = { 0 };
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((fd = open(path, O_RDONLY)) < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	*out = strtoull(buf, NULL, 10);
	return 0;
}

/* Until heapd has reaped the dead client: its lock on ref released. */
static int wait_unlocked(uh_heap *h, uh_off ref)
{
	for (int i = 0; i < 1000; i++) {	/* bound: 10 s */
		if (!uh_lock_is_locked(lock_word(h, ref)))
			return 0;
		th_sleep_ms(10);
	}
	return -1;
}

/* Until heapd has rolled the dead client's block back: its lock on ref
 * released and the new object's slot freed. The rollback releases every
 * lock first and frees the block's new objects after (logapply.c), so an
 * unlocked object may still be valid for a moment. */
static int wait_rolled_back(uh_heap *h, uh_off ref)
{
	for (int i = 0; i < 1000; i++) {	/* bound: 10 s */
		if (!uh_lock_is_locked(lock_word(h, ref)) && !is_valid(h, ref))
			return 0;
		th_sleep_ms(10);
	}
	return -1;
}

static void test_dead_client(const struct th_heapd *d, uh_heap *h)
{
	char *hold[] = { (char *)th_bin("prog_gc_newobj"), "--socket", (char *)d->sock, "--hold",
			 (char *)d->dir, NULL };
	char *commit[] = { (char *)th_bin("prog_gc_newobj"), "--socket", (char *)d->sock,
			   "--commit", NULL };
	uh_off n = 0, root = 0;

	/* Killed inside its block: heapd rolls it back. */
	pid_t pid = th_spawn(hold, NULL);
	TH_CHECK(pid > 0);
	TH_CHECK(th_wait_file(d->dir, "newobj.ready", 10000) == 0);
	TH_CHECK(read_ref_file(d->dir, "newobj.ready", &n) == 0);
	TH_CHECK(n != 0);
	if (n) {
		uint64_t w = lock_word(h, n);
		TH_CHECK(uh_lock_is_locked(w));
	}
	th_kill(pid);
	if (n) {
		TH_CHECK(wait_rolled_back(h, n) == 0);
	}

	/* Killed in its commit's apply: heapd replays it. */
	pid = th_spawn(commit, NULL);
	TH_CHECK(pid > 0);
	TH_CHECK_EQ(th_wait_exit(pid), 128 + 9);
	for (int i = 0; i < 1000 && uh_root_get(h, "gc.new", &root) != 0; i++)	/* bound: 10 s */
		th_sleep_ms(10);
	TH_CHECK(root != 0);
	if (root) {
		TH_CHECK(wait_unlocked(h, root) == 0);
		TH_CHECK(is_valid(h, root));
	}
}

int main(void)
{
	struct th_heapd d = { 0 };
	uh_heap *h = NULL;

	if (th_heapd_start(&d, NULL) != 0 || th_connect(&d, 0, &h) != 0) {
		th_fail(__FILE__, __LINE__, "heapd or connect failed");
		th_heapd_cleanup(&d);
		return th_summary(SUITE);
	}
	setup(h);
	printf("%s: GC file %s\n", SUITE, private_area ? "not mapped: a private area" : "mapped");
	test_idle_pushes_nothing(h);
	test_mark_commit_and_single(h);
	test_mark_free(h);
	test_mark_map_puts(h);
	test_mark_fresh_objects(h);
	test_full_ring(h);
	test_new_objects_locked(h);
	teardown(h);
	test_dead_client(&d, h);
	uh_disconnect(h);
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
