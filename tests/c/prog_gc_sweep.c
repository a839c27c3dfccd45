/*
 * prog_gc_sweep.c -- the client of the sweep's crash and power-loss
 * campaigns (test_crash_gc_sweep, test_powerloss_gc): the heap they
 * prepare, the check of what must survive a crash in the sweep, and a
 * client that holds pins across heapd's crash.
 *
 * Usage:
 *   prog_gc_sweep --setup SOCK [GARBAGE [apart]]
 *       The model: root "gc.live", a list of LIVE nodes (node i: v = i);
 *       root "gc.big", a bytes object of BIG_LEN (pattern of seed 1);
 *       root "gc.pinned", a list of PINNED nodes (v = PINNED_V0 + i);
 *       and what --drop makes garbage: root "gc.garbage", a list of
 *       GARBAGE nodes (default 6000: two sweep batches of 4096), and
 *       roots "gc.junk.0".."gc.junk.2", BIG_GARBAGE bytes objects of
 *       BIG_LEN (large regions the sweep gives back). (Garbage must be
 *       made after heapd's start: its recovery would collect it.)
 *       With "apart", the pinned list's nodes are of a class of their own
 *       (48-byte slots), so they lie in arenas the keeper never leases.
 *   prog_gc_sweep --drop SOCK
 *       Deletes "gc.garbage" and the "gc.junk.*" roots: from then on only
 *       the online GC can free what they held.
 *   prog_gc_sweep --check SOCK [--no-pinned]
 *       Every live object of the model with its content (and the pinned
 *       list, unless --no-pinned: the keeper dropped its root); prints
 *       "live_ok=1" and exits 0, or says what is missing and exits 1.
 *   prog_gc_sweep --sweep SOCK
 *       The power-loss workload: --drop, then the mark "gc" (pl_mark:
 *       crash states are taken from here on), then heapctl gc --wait;
 *       exits 0 if the cycle was done.
 *   prog_gc_sweep --keep SOCK SYNCDIR
 *       The keeper: allocates KEPT nodes of its own (v = KEPT_V0 + i),
 *       reachable from nothing, and pins them; pins every node of
 *       "gc.pinned" and deletes that root; keeps (unpinned, in its own
 *       memory) the references of the "gc.garbage" list, which --drop
 *       will make garbage. Then signals SYNCDIR/ready and serves: on
 *       SYNCDIR/check.N it commits a block (re-attaching to a restarted
 *       heapd), reads every pinned node, and pins and unpins every 7th
 *       garbage reference (uh_pin must answer UH_EFREED for a freed one,
 *       not wait for a lock nobody will release), answering
 *       SYNCDIR/checked.N with "ok=... bad=... stale=..."; on SYNCDIR/quit it
 *       disconnects (its pins go) and exits 0. Exits 3 when nobody talks
 *       to it for 120 s (never outlives a test).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "powerloss.h"

#define LIVE 1000
#define PINNED 200
#define PINNED_V0 100000
#define KEPT 300
#define KEPT_V0 200000
#define BIG_LEN 40000
#define BIG_GARBAGE 3
#define GARBAGE_DEFAULT 6000

static const uh_field_spec node_fields[] = { { "v", UH_T_I64, 0 }, { "next", UH_T_REF, 0 } };

static int node_class(uh_heap *h, uint32_t *cls)
{
	return uh_class_register(h, "GcSweepNode", node_fields, 2, cls);
}

static void pattern(unsigned char *buf, size_t len, uint64_t seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)(th_mix64(seed * 1000003u + i) >> 7);
}

/* ---- setup ---- */

struct setup {
	uint32_t cls, pinned_cls;
	long garbage;
};

static const uh_field_spec apart_fields[] = { { "v", UH_T_I64, 0 }, { "next", UH_T_REF, 0 },
					      { "a", UH_T_I64, 0 }, { "b", UH_T_I64, 0 } };

/* A list of n nodes, v = v0 + i in order; *head its first node. */
static int make_list(uh_heap *h, uint32_t cls, long n, int64_t v0, uh_off *head)
{
	uh_off next = 0, o;
	int rc = 0;
	for (long i = n - 1; i >= 0 && !rc; i--) {	/* n nodes */
		if (!(rc = uh_alloc(h, cls, &o)) && !(rc = uh_set_i64(h, o, 0, v0 + i)) &&
		    !(rc = uh_set_ref(h, o, 1, next)))
			next = o;
	}
	*head = next;
	return rc;
}

static int setup_fn(uh_heap *h, void *arg)
{
	static unsigned char big[BIG_LEN];
	struct setup *s = arg;
	uh_off o;
	int rc = make_list(h, s->cls, LIVE, 0, &o);
	if (!rc)
		rc = uh_root_set(h, "gc.live", o);
	if (!rc && !(rc = make_list(h, s->pinned_cls, PINNED, PINNED_V0, &o)))
		rc = uh_root_set(h, "gc.pinned", o);
	pattern(big, sizeof(big), 1);
	if (!rc && !(rc = uh_bytes_new(h, big, sizeof(big), &o)))
		rc = uh_root_set(h, "gc.big", o);
	/* Garbage once dropped: a list, and large regions. */
	if (!rc && !(rc = make_list(h, s->cls, s->garbage, -1000000, &o)))
		rc = uh_root_set(h, "gc.garbage", o);
	for (int i = 0; i < BIG_GARBAGE && !rc; i++) {
		char name[32];
		snprintf(name, sizeof(name), "gc.junk.%d", i);
		if (!(rc = uh_bytes_new(h, big, sizeof(big), &o)))
			rc = uh_root_set(h, name, o);
	}
	return rc;
}

static int drop_fn(uh_heap *h, void *arg)
{
	(void)arg;
	int rc = uh_root_del(h, "gc.garbage");
	for (int i = 0; i < BIG_GARBAGE && !rc; i++) {
		char name[32];
		snprintf(name, sizeof(name), "gc.junk.%d", i);
		rc = uh_root_del(h, name);
	}
	return rc;
}

static int do_setup(uh_heap *h, long garbage, int apart)
{
	struct setup s = { 0, 0, garbage };
	int rc = node_class(h, &s.cls);
	s.pinned_cls = s.cls;
	if (!rc && apart)
		rc = uh_class_register(h, "GcSweepApart", apart_fields, 4, &s.pinned_cls);
	if (!rc)
		rc = uh_run(h, setup_fn, &s, 0);
	if (!rc)
		printf("setup: live=%d pinned=%d big=1 garbage=%ld big_garbage=%d\n", LIVE, PINNED,
		       garbage, BIG_GARBAGE);
	return rc;
}

/* ---- check ---- */

/* The list under root name: n nodes, v = v0 + i. 0 if so. */
static int check_list(uh_heap *h, const char *name, long n, int64_t v0)
{
	uh_off o = 0;
	long i = 0;
	if (uh_root_get(h, name, &o) != 0) {
		printf("root %s missing\n", name);
		return -1;
	}
	for (; o && i <= n; i++) {	/* at most n + 1 nodes */
		int64_t v = -1;
		int rc = uh_get_i64(h, o, 0, &v);
		if (rc || v != v0 + i) {
			printf("%s: node %ld: %s (v=%lld)\n", name, i, rc ? uh_strerror(rc) : "content",
			       (long long)v);
			return -1;
		}
		if ((rc = uh_get_ref(h, o, 1, &o)) != 0) {
			printf("%s: node %ld: next: %s\n", name, i, uh_strerror(rc));
			return -1;
		}
	}
	if (i != n) {
		printf("%s: %ld nodes, want %ld\n", name, i, n);
		return -1;
	}
	return 0;
}

static int do_check(uh_heap *h, int pinned)
{
	static unsigned char want[BIG_LEN];
	const void *data;
	size_t len = 0;
	uh_off o;
	int bad = check_list(h, "gc.live", LIVE, 0) != 0;
	if (pinned)
		bad |= check_list(h, "gc.pinned", PINNED, PINNED_V0) != 0;
	pattern(want, sizeof(want), 1);
	int rc = uh_root_get(h, "gc.big", &o);
	if (!rc)
		rc = uh_bytes_get(h, o, &data, &len);
	if (rc || len != sizeof(want) || memcmp(data, want, len) != 0) {
		printf("gc.big: %s (len %zu)\n", rc ? uh_strerror(rc) : "content", len);
		bad = 1;
	}
	printf("live_ok=%d\n", !bad);
	return bad;
}

/* ---- keep ---- */

struct held {
	uh_off ref;
	int64_t v;
};

static struct held held[KEPT + PINNED];
static int nheld;
static uh_off *stale;	/* the garbage list's nodes */
static long nstale;

struct keep {
	uint32_t cls;
};

static int kept_fn(uh_heap *h, void *arg)
{
	struct keep *k = arg;
	int rc = 0;
	nheld = 0;
	for (int i = 0; i < KEPT && !rc; i++) {	/* KEPT nodes */
		if (!(rc = uh_alloc(h, k->cls, &held[nheld].ref)) &&
		    !(rc = uh_set_i64(h, held[nheld].ref, 0, KEPT_V0 + i)))
			held[nheld++].v = KEPT_V0 + i;
	}
	return rc;
}

/* Reads the pinned list (root "gc.pinned") into held[]. */
static int read_pinned(uh_heap *h)
{
	uh_off o = 0;
	int rc = uh_root_get(h, "gc.pinned", &o);
	for (int i = 0; !rc && o && i < PINNED; i++) {	/* PINNED nodes */
		held[nheld].ref = o;
		if (!(rc = uh_get_i64(h, o, 0, &held[nheld].v)))
			rc = uh_get_ref(h, o, 1, &o);
		nheld++;
	}
	return rc;
}

/* The references of the garbage-to-be list, kept unpinned. */
static int read_stale(uh_heap *h)
{
	uh_off o = 0;
	long cap = 0;
	int rc = uh_root_get(h, "gc.garbage", &o);
	for (; !rc && o; nstale++) {	/* the list's length */
		if (nstale == cap && !(stale = realloc(stale, (size_t)(cap += 4096) * sizeof(*stale))))
			return UH_ENOMEM;
		stale[nstale] = o;
		rc = uh_get_ref(h, o, 1, &o);
	}
	return rc;
}

/* Pin and unpin every 7th stale reference: each pin answers at once, 0
 * (not swept yet) or UH_EFREED. Returns how many answered otherwise. */
static long pin_stale(uh_heap *h)
{
	long odd = 0;
	for (long i = 0; i < nstale; i += 7) {	/* nstale / 7 */
		uint32_t pin;
		int rc = uh_pin(h, stale[i], &pin);
		if (rc == 0)
			rc = uh_unpin(h, pin);
		odd += rc != 0 && rc != UH_EFREED;
	}
	return odd;
}

static int touch_fn(uh_heap *h, void *arg)
{
	(void)arg;
	return uh_set_i64(h, held[0].ref, 0, held[0].v);	/* same value: a commit */
}

/* Waits for SYNCDIR/check.N or quit; 1 quit, 0 check, -1 nobody came. */
static int next_request(const char *dir, int n)
{
	char name[32];
	snprintf(name, sizeof(name), "check.%d", n);
	for (int i = 0; i < 12000; i++) {	/* 120 s */
		if (th_wait_file(dir, "quit", 0) == 0)
			return 1;
		if (th_wait_file(dir, name, 0) == 0)
			return 0;
		th_sleep_ms(10);
	}
	return -1;
}

static int do_keep(uh_heap *h, const char *dir)
{
	struct keep k;
	uint32_t pin;
	char text[64], name[32];
	int rc = node_class(h, &k.cls);
	if (!rc)
		rc = uh_run(h, kept_fn, &k, 0);
	if (!rc)
		rc = read_pinned(h);
	if (!rc)
		rc = read_stale(h);
	for (int i = 0; i < nheld && !rc; i++)	/* KEPT + PINNED */
		rc = uh_pin(h, held[i].ref, &pin);
	if (!rc)
		rc = uh_root_del(h, "gc.pinned");
	if (rc) {
		fprintf(stderr, "keeper: %s: %s\n", uh_strerror(rc), uh_errmsg());
		return 1;
	}
	snprintf(text, sizeof(text), "held=%d", nheld);
	th_signal_file(dir, "ready", text);
	for (int n = 1;; n++) {	/* until quit, or 120 s of silence */
		int r = next_request(dir, n);
		if (r)
			return r > 0 ? 0 : 3;
		int ok = 0;
		rc = uh_run(h, touch_fn, NULL, 0);
		for (int i = 0; i < nheld; i++) {	/* every pinned node */
			int64_t v = -1;
			ok += uh_get_i64(h, held[i].ref, 0, &v) == 0 && v == held[i].v;
		}
		long odd = pin_stale(h);
		snprintf(text, sizeof(text), "ok=%d bad=%d commit=%d stale=%ld", ok, nheld - ok, rc,
			 odd);
		snprintf(name, sizeof(name), "checked.%d", n);
		th_signal_file(dir, name, text);
	}
}

/* heapctl gc --wait; its output printed; 0 if the cycle was done. */
static int do_sweep(const char *sock)
{
	static char out[1 << 14];
	char *argv[] = { (char *)th_bin("heapctl"), "--socket", (char *)sock, "--json", "gc",
			 "--wait", NULL };
	pl_mark("gc\n", 3);
	int rc = th_run_capture(argv, out, sizeof(out));
	printf("%s", out);
	return rc == 0 && strstr(out, "\"outcome\":\"done\"") ? 0 : 1;
}

int main(int argc, char **argv)
{
	uh_heap *h = NULL;
	if (argc < 3) {
		fprintf(stderr, "usage: prog_gc_sweep --setup|--check|--sweep|--keep SOCK ...\n");
		return 2;
	}
	int rc = uh_connect(argv[2], 0, &h);
	if (rc) {
		fprintf(stderr, "connect: %s: %s\n", uh_strerror(rc), uh_errmsg());
		return 1;
	}
	if (!strcmp(argv[1], "--setup"))
		rc = do_setup(h, argc > 3 ? atol(argv[3]) : GARBAGE_DEFAULT,
			      argc > 4 && !strcmp(argv[4], "apart"));
	else if (!strcmp(argv[1], "--check"))
		rc = do_check(h, !(argc > 3 && !strcmp(argv[3], "--no-pinned")));
	else if (!strcmp(argv[1], "--drop"))
		rc = uh_run(h, drop_fn, NULL, 0);
	else if (!strcmp(argv[1], "--sweep") && !(rc = uh_run(h, drop_fn, NULL, 0)))
		rc = do_sweep(argv[2]) ? UH_EINTERNAL : 0;
	else if (!strcmp(argv[1], "--keep") && argc > 3)
		rc = do_keep(h, argv[3]);
	else
		rc = 2;
	if (rc && strcmp(argv[1], "--check"))
		fprintf(stderr, "prog_gc_sweep %s: %s: %s\n", argv[1], uh_strerror(rc), uh_errmsg());
	uh_disconnect(h);
	return rc ? 1 : 0;
}
