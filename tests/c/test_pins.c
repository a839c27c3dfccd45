/*
 * test_pins.c -- pins for the online GC (uh_pin/uh_unpin, FORMAT.md 9.3)
 * against a real heapd, with the GC file mapped here as the collector
 * reads it: ids and their reuse, UH_EFREED and UH_EINVAL, entries in the
 * session's area, deferral while gc_state says MARK (the test stores the
 * collector's state into the header itself), unpins from another thread
 * racing pins, pins moving to the new session's area when heapd restarts
 * (same GC file and another one), a killed client's area zeroed after
 * its reap, pins of a read-only session, and a heapd without a GC file.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gcfile.h"
#include "harness.h"
#include "uhint.h"

static const char *SUITE = "test_pins";

static uint32_t cls;

/* The GC file mapped read-only, as heapd's collector sees it. */
struct gcview {
	char *base;
	size_t size;
};

static int gc_map(struct gcview *v, const char *path)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	v->base = NULL;
	if (fd < 0 || fstat(fd, &st) != 0) {
		fprintf(stderr, "cannot open %s\n", path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	v->size = (size_t)st.st_size;
	void *p = mmap(NULL, v->size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -1;
	v->base = p;
	return 0;
}

static void gc_unmap(struct gcview *v)
{
	if (v->base)
		munmap(v->base, v->size);
	v->base = NULL;
}

static volatile struct uh_gc_sess *area(struct gcview *v, uint32_t s)
{
	return (volatile struct uh_gc_sess *)(v->base + UH_GC_AREA_OFF(s));
}

static volatile uint64_t *pins_of(struct gcview *v, uint32_t s)
{
	return (volatile uint64_t *)(v->base + UH_GC_AREA_OFF(s) + UH_GC_PIN_OFF);
}

static uint32_t session_of(uh_heap *h)
{
	uh_info info;
	TH_CHECK_RC(uh_heap_info(h, &info));
	return info.session;
}

static uint64_t pins_now(uh_heap *h)
{
	uh_stats st;
	TH_CHECK_RC(uh_stats_get(h, &st));
	return st.pins;
}

static uh_off new_obj(uh_heap *h)
{
	uh_off o = 0;
	TH_CHECK_RC(uh_alloc(h, cls, &o));
	return o;
}

/* The collector's side of the header word, simulated. */
static void set_phase(uh_heap *h, uint32_t phase)
{
	uint64_t s = __atomic_load_n(&h->hdr->gc_state, __ATOMIC_SEQ_CST);
	uint64_t cycle = uh_gc_cycle(s) + (phase == UH_GC_MARK);
	__atomic_store_n(&h->hdr->gc_state, uh_gc_state_make(cycle, phase), __ATOMIC_SEQ_CST);
}

static void test_ids(uh_heap *h, struct gcview *v)
{
	uint32_t s = session_of(h);
	uh_off a = new_obj(h), b = new_obj(h), c = new_obj(h);
	uint32_t pa = 0, pb = 0, pc = 0;
	TH_CHECK_RC(uh_pin(h, a, &pa));
	TH_CHECK_RC(uh_pin(h, b, &pb));
	TH_CHECK(pa != 0 && pb != 0 && pa != pb);
	TH_CHECK_EQ(pins_of(v, s)[pa], a);
	TH_CHECK_EQ(pins_of(v, s)[pb], b);
	TH_CHECK(area(v, s)->pin_hwm > pb && area(v, s)->pin_hwm > pa);
	TH_CHECK_EQ(area(v, s)->pins, 2);
	TH_CHECK_EQ(pins_now(h), 2);

	TH_CHECK_RC(uh_unpin(h, pa));
	TH_CHECK(pins_of(v, s)[pa] & 1);	/* free: odd */
	TH_CHECK_EQ(area(v, s)->pins, 1);
	TH_CHECK_ERR(uh_unpin(h, pa), UH_EINVAL);	/* twice */
	TH_CHECK_ERR(uh_unpin(h, 12345), UH_EINVAL);	/* never given */
	TH_CHECK_ERR(uh_unpin(h, UH_PIN_MAX + 7), UH_EINVAL);
	TH_CHECK_RC(uh_pin(h, c, &pc));
	TH_CHECK_EQ(pc, pa);				/* the freed id again */
	TH_CHECK_EQ(pins_of(v, s)[pc], c);

	/* The same object pinned twice: two pins, each released alone. */
	uint32_t pb2 = 0;
	TH_CHECK_RC(uh_pin(h, b, &pb2));
	TH_CHECK(pb2 != pb);
	TH_CHECK_RC(uh_unpin(h, pb));
	TH_CHECK_EQ(pins_of(v, s)[pb2], b);
	TH_CHECK_RC(uh_unpin(h, pb2));
	TH_CHECK_RC(uh_unpin(h, pc));
	TH_CHECK_EQ(pins_now(h), 0);
	TH_CHECK_EQ(area(v, s)->pins, 0);
	TH_CHECK_ERR(uh_pin(h, a, NULL), UH_EINVAL);
}

static void test_freed(uh_heap *h, struct gcview *v)
{
	uint32_t s = session_of(h);
	uh_off x = new_obj(h);
	uint32_t p = 99;
	TH_CHECK_RC(uh_free(h, x));
	uint64_t hwm = area(v, s)->pin_hwm;
	TH_CHECK_ERR(uh_pin(h, x, &p), UH_EFREED);
	TH_CHECK_EQ(p, 0);
	TH_CHECK_EQ(pins_now(h), 0);
	TH_CHECK_EQ(area(v, s)->pins, 0);
	TH_CHECK(area(v, s)->pin_hwm <= hwm + 1);
	/* A stale generation (the slot reused) and a non-object. */
	uh_off y = new_obj(h);
	TH_CHECK_ERR(uh_pin(h, y ^ (1ull << 48), &p), UH_EFREED);
	TH_CHECK_ERR(uh_pin(h, 8, &p), UH_EFREED);
	TH_CHECK_ERR(uh_pin(h, 0, &p), UH_EFREED);
}

static void test_deferred(uh_heap *h, struct gcview *v)
{
	uint32_t s = session_of(h);
	uh_off a = new_obj(h), b = new_obj(h);
	uint32_t pa = 0, pb = 0;
	TH_CHECK_RC(uh_pin(h, a, &pa));
	set_phase(h, UH_GC_MARK);
	uint64_t head = area(v, s)->head;
	TH_CHECK_RC(uh_unpin(h, pa));
	TH_CHECK_EQ(pins_of(v, s)[pa], a);		/* kept while marking */
	TH_CHECK_EQ(pins_now(h), 0);
	TH_CHECK_ERR(uh_unpin(h, pa), UH_EINVAL);	/* unpinned already */
	TH_CHECK_RC(uh_pin(h, b, &pb));
	TH_CHECK(pb != pa);				/* not reused yet */
	TH_CHECK_EQ(area(v, s)->head, head + 1);	/* b went grey */
	uint64_t *ring = (uint64_t *)(v->base + UH_GC_AREA_OFF(s) + sizeof(struct uh_gc_sess));
	TH_CHECK_EQ(ring[head % UH_GC_RING_CAP], b);
	TH_CHECK_EQ(area(v, s)->busy, 0);
	TH_CHECK_EQ(area(v, s)->seen, h->hdr->gc_state);

	set_phase(h, UH_GC_SWEEP);
	uint32_t pc = 0;
	TH_CHECK_RC(uh_pin(h, a, &pc));
	TH_CHECK_EQ(pc, pa);			/* released at this pin, then taken */
	TH_CHECK_EQ(area(v, s)->head, head + 1);	/* no grey outside MARK */
	set_phase(h, UH_GC_IDLE);
	TH_CHECK_RC(uh_unpin(h, pb));
	TH_CHECK_RC(uh_unpin(h, pc));
	TH_CHECK_EQ(area(v, s)->pins, 0);

	/* A second mark: released ids wait for that cycle's end too. */
	TH_CHECK_RC(uh_pin(h, a, &pa));
	set_phase(h, UH_GC_MARK);
	TH_CHECK_RC(uh_unpin(h, pa));
	set_phase(h, UH_GC_IDLE);
	set_phase(h, UH_GC_MARK);		/* the next cycle marks */
	TH_CHECK_RC(uh_pin(h, b, &pb));	/* ...the old deferral is over */
	TH_CHECK_EQ(pb, pa);
	set_phase(h, UH_GC_IDLE);
	TH_CHECK_RC(uh_unpin(h, pb));
	TH_CHECK_EQ(pins_now(h), 0);
}

/* ---- unpins from another thread ---- */

enum { RACE_PINS = 20000, QCAP = 256 };

struct race {
	uh_heap *h;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint32_t q[QCAP];
	unsigned qh, qt;
	int done;
	uint8_t *live;		/* live[id]: pinned now (atomic bytes) */
	int errors;
};

static void *unpinner(void *arg)
{
	struct race *r = arg;
	for (;;) {
		pthread_mutex_lock(&r->mu);
		while (r->qh == r->qt && !r->done)
			pthread_cond_wait(&r->cv, &r->mu);
		if (r->qh == r->qt && r->done) {
			pthread_mutex_unlock(&r->mu);
			return NULL;
		}
		uint32_t id = r->q[r->qt++ % QCAP];
		pthread_cond_broadcast(&r->cv);
		pthread_mutex_unlock(&r->mu);
		/* Cleared before the id can be given out again. */
		__atomic_store_n(&r->live[id], 0, __ATOMIC_SEQ_CST);
		if (uh_unpin(r->h, id) != 0)
			__atomic_add_fetch(&r->errors, 1, __ATOMIC_SEQ_CST);
	}
}

static void test_threads(uh_heap *h, struct gcview *v)
{
	uint32_t s = session_of(h);
	struct race r = { .h = h };
	pthread_mutex_init(&r.mu, NULL);
	pthread_cond_init(&r.cv, NULL);
	r.live = calloc(RACE_PINS + 2, 1);
	uh_off objs[8];
	for (int i = 0; i < 8; i++)
		objs[i] = new_obj(h);
	pthread_t t;
	pthread_create(&t, NULL, unpinner, &r);
	int doubles = 0, bad = 0;
	uint32_t kept[64];
	int nkept = 0;
	for (int i = 0; i < RACE_PINS; i++) {
		uint32_t id = 0;
		if (uh_pin(h, objs[i % 8], &id) != 0 || id == 0 || id > RACE_PINS) {
			bad++;
			continue;
		}
		if (__atomic_exchange_n(&r.live[id], 1, __ATOMIC_SEQ_CST))
			doubles++;
		if (i % 311 == 0 && nkept < 64) {
			kept[nkept++] = id;	/* held to the end */
			continue;
		}
		pthread_mutex_lock(&r.mu);
		while (r.qh - r.qt == QCAP)
			pthread_cond_wait(&r.cv, &r.mu);
		r.q[r.qh++ % QCAP] = id;
		pthread_cond_signal(&r.cv);
		pthread_mutex_unlock(&r.mu);
	}
	pthread_mutex_lock(&r.mu);
	r.done = 1;
	pthread_cond_broadcast(&r.cv);
	pthread_mutex_unlock(&r.mu);
	pthread_join(t, NULL);
	TH_CHECK_EQ(bad, 0);
	TH_CHECK_EQ(doubles, 0);
	TH_CHECK_EQ(r.errors, 0);
	TH_CHECK_EQ(pins_now(h), nkept);
	TH_CHECK_EQ(area(v, s)->pins, nkept);
	uint64_t held = 0, hwm = area(v, s)->pin_hwm;
	for (uint64_t i = 0; i < hwm; i++)
		held += pins_of(v, s)[i] && !(pins_of(v, s)[i] & 1);
	TH_CHECK_EQ(held, nkept);
	TH_CHECK(hwm <= 1 + 64 + QCAP + 2);	/* ids were reused, not grown */
	for (int i = 0; i < nkept; i++)
		TH_CHECK_RC(uh_unpin(h, kept[i]));
	free(r.live);
	pthread_mutex_destroy(&r.mu);
	pthread_cond_destroy(&r.cv);
}

/* ---- heapd restarts: pins move, same ids ---- */

static void check_moved(uh_heap *h, struct gcview *v, const uh_off *objs, const uint32_t *ids,
			int n, uint32_t old_session)
{
	uint32_t s = session_of(h);
	TH_CHECK(s != 0 && s != old_session);
	for (int i = 0; i < n; i++)
		TH_CHECK_EQ(pins_of(v, s)[ids[i]], objs[i]);
	TH_CHECK_EQ(area(v, s)->pins, n);
	TH_CHECK_EQ(pins_now(h), n);
}

static void test_restart(struct th_heapd *d, uh_heap *h)
{
	enum { N = 5 };
	uh_off objs[N];
	uint32_t ids[N];
	for (int i = 0; i < N; i++) {
		objs[i] = new_obj(h);
		TH_CHECK_RC(uh_pin(h, objs[i], &ids[i]));
	}
	TH_CHECK_RC(uh_root_set(h, "pins.anchor", objs[0]));
	uint32_t s0 = session_of(h);

	/* heapd killed, started with another GC file: the pins are copied
	 * into it at the re-attach. */
	char other[700], args[800];
	snprintf(other, sizeof(other), "%s/other.gc", d->dir);
	snprintf(args, sizeof(args), "--gc-file %s", other);
	th_heapd_kill(d);
	TH_CHECK(th_heapd_start(d, args) == 0);
	TH_CHECK_RC(uh_set_i64(h, objs[1], 0, 7));	/* re-attaches */
	struct gcview v;
	if (gc_map(&v, other) != 0) {
		TH_CHECK(!"the new GC file maps");
		return;
	}
	check_moved(h, &v, objs, ids, N, s0);
	uint32_t s1 = session_of(h);
	gc_unmap(&v);
	struct stat before, after;
	TH_CHECK(stat(other, &before) == 0);

	/* heapd stopped while we are attached: it keeps the file, the next
	 * one reuses it, and our pins are still there (then moved). */
	TH_CHECK(th_heapd_restart(d) == 0);
	TH_CHECK_RC(uh_set_i64(h, objs[2], 0, 8));
	TH_CHECK(stat(other, &after) == 0 && after.st_ino == before.st_ino);
	if (gc_map(&v, other) != 0) {
		TH_CHECK(!"the reused GC file maps");
		return;
	}
	check_moved(h, &v, objs, ids, N, s1);
	for (int i = 0; i < N; i++)
		TH_CHECK_RC(uh_unpin(h, ids[i]));
	TH_CHECK_EQ(pins_now(h), 0);
	uint32_t again = 0;
	TH_CHECK_RC(uh_pin(h, objs[3], &again));
	int known = 0;
	for (int i = 0; i < N; i++)
		known |= again == ids[i];
	TH_CHECK(known);			/* from the copied free list */
	TH_CHECK_RC(uh_unpin(h, again));
	gc_unmap(&v);
}

/* ---- a killed client's area ---- */

static void test_reaped(struct th_heapd *d, uh_heap *h, const char *gc_path)
{
	uh_off held = new_obj(h);
	TH_CHECK_RC(uh_root_set(h, "pins.held", held));
	char sync[700];
	snprintf(sync, sizeof(sync), "%s/sync", d->dir);
	mkdir(sync, 0700);
	char *argv[] = { (char *)th_bin("prog_pin_holder"), d->sock, sync, NULL };
	pid_t pid = th_spawn(argv, NULL);
	TH_CHECK(pid > 0);
	if (pid <= 0 || th_wait_file(sync, "holder.ready", 20000) != 0) {
		TH_CHECK(!"the pin holder got ready");
		return;
	}
	char path[800];
	snprintf(path, sizeof(path), "%s/holder.ready", sync);
	size_t len = 0;
	char *text = th_read_file(path, &len);
	uint32_t s = text ? (uint32_t)strtoul(text, NULL, 10) : 0;
	free(text);
	struct gcview v;
	if (s == 0 || gc_map(&v, gc_path) != 0) {
		TH_CHECK(!"the holder's session and GC file");
		th_kill(pid);
		return;
	}
	TH_CHECK_EQ(area(&v, s)->pins, 3);
	TH_CHECK_EQ(pins_of(&v, s)[1], held);
	th_kill(pid);
	uint64_t t0 = th_now_ms();
	while ((area(&v, s)->pin_hwm || pins_of(&v, s)[1]) && th_now_ms() - t0 < 20000)
		th_sleep_ms(10);
	TH_CHECK_EQ(area(&v, s)->pin_hwm, 0);
	TH_CHECK_EQ(area(&v, s)->pins, 0);
	TH_CHECK_EQ(pins_of(&v, s)[1], 0);
	TH_CHECK_EQ(pins_of(&v, s)[3], 0);
	gc_unmap(&v);
}

static void test_readonly(struct th_heapd *d, struct gcview *v)
{
	uh_heap *ro = NULL;
	uh_off anchor = 0;
	uint32_t p = 0;
	if (th_connect(d, UH_READONLY, &ro) != 0) {
		TH_CHECK(!"a read-only session connects");
		return;
	}
	TH_CHECK_RC(uh_root_get(ro, "pins.anchor", &anchor));
	TH_CHECK_RC(uh_pin(ro, anchor, &p));
	TH_CHECK(p != 0);
	TH_CHECK_EQ(pins_of(v, session_of(ro))[p], anchor);
	TH_CHECK_RC(uh_unpin(ro, p));
	uh_disconnect(ro);
}

/* A heapd whose GC file cannot be made (its folder is missing) serves
 * without one: pins are no-ops, id 0. */
static void test_no_gc_file(void)
{
	struct th_heapd d2 = { 0 };
	char args[800];
	uh_heap *h2 = NULL;
	if (th_heapd_start(&d2, NULL) != 0) {
		TH_CHECK(!"a second heapd starts");
		return;
	}
	th_heapd_stop(&d2);
	snprintf(args, sizeof(args), "--gc-file %s/missing/x.gc", d2.dir);
	if (th_heapd_start(&d2, args) == 0 && th_connect(&d2, 0, &h2) == 0) {
		uint32_t c2 = 0, p = 77;
		uh_off o = 0;
		static const uh_field_spec f[] = { { "v", UH_T_I64, 0 } };
		TH_CHECK_RC(uh_class_register(h2, "pins.Obj", f, 1, &c2));
		TH_CHECK_RC(uh_alloc(h2, c2, &o));
		TH_CHECK_RC(uh_pin(h2, o, &p));
		TH_CHECK_EQ(p, 0);
		TH_CHECK_RC(uh_unpin(h2, p));
		TH_CHECK_RC(uh_unpin(h2, 5));
		TH_CHECK_RC(uh_free(h2, o));
		TH_CHECK_ERR(uh_pin(h2, o, &p), UH_EFREED);
		uh_disconnect(h2);
	} else {
		TH_CHECK(!"heapd without a GC file serves");
	}
	th_heapd_cleanup(&d2);
}

int main(void)
{
	struct th_heapd d = { 0 };
	static const uh_field_spec f[] = { { "v", UH_T_I64, 0 } };
	uh_heap *h;
	struct gcview v;
	char gc_path[700];

	if (th_heapd_start(&d, NULL) != 0 || th_connect(&d, 0, &h) != 0)
		return 1;
	snprintf(gc_path, sizeof(gc_path), "%s.gc", d.sock);
	TH_CHECK_RC(uh_class_register(h, "pins.Obj", f, 1, &cls));
	if (gc_map(&v, gc_path) == 0) {
		const struct uh_gc_filehdr *g = (const void *)v.base;
		TH_CHECK_EQ(g->magic, UH_GC_MAGIC);
		TH_CHECK_EQ(v.size, UH_GC_FILE_SIZE(g->session_cap));
		test_ids(h, &v);
		test_freed(h, &v);
		test_deferred(h, &v);
		test_threads(h, &v);
		test_reaped(&d, h, gc_path);
		gc_unmap(&v);
	} else {
		TH_CHECK(!"heapd made the GC file");
	}
	test_restart(&d, h);
	snprintf(gc_path, sizeof(gc_path), "%s/other.gc", d.dir);
	if (gc_map(&v, gc_path) == 0) {
		test_readonly(&d, &v);
		gc_unmap(&v);
	}
	uh_disconnect(h);
	th_heapd_cleanup(&d);
	test_no_gc_file();
	return th_summary(SUITE);
}
