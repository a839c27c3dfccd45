/*
 * test_grow_attach.c -- writers attach, and their blocks' logs grow, on a
 * heap whose pool is full (FORMAT.md 1.1, "Logs in the extension"): only
 * --max-size or a full file system may refuse a writer its log.
 *
 * A 16M heap that may grow to 512M is filled by one client well past its
 * pool. Then 16 sessions attach one after another (sharing the filler's
 * mapping) and 16 processes' worth of sessions at once (threads, each its
 * own connection and mapping); every one runs a block that allocates 300
 * records of 4000 inline bytes and one that rewrites them all (1.2 MB of
 * logged writes: more than the 1 MiB log area, so log extents). All
 * commit and read back. One more session's block meets heapd killed
 * between its log extent's commit and the write of the extent's link
 * (FORMAT.md 7, the redo pair), and commits after the restart. heapd is
 * then SIGKILLed with every session
 * attached: in the heap file, each chunk's bit is set iff exactly one
 * arena, session log or extent covers it, and logs do lie in the
 * extension. The sessions re-attach to the restarted heapd and commit
 * again; once they are gone the map names arenas only; heapctl check
 * finds the heap sound.
 *
 * And the limits stay clean: in a heap that cannot grow, and in one that
 * has reached its --max-size, an attach that finds no room for its log
 * fails with HeapFull (naming the maximum size where there is one), heapd
 * goes on serving, and the heap is sound.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "harness.h"

#define MIB (1ull << 20)
#define RECS 300
#define VAL 4000
#define SESSIONS 16

static struct th_heapd d;
static uint32_t cls;

static int register_class(uh_heap *h)
{
	uh_field_spec f[] = { { "value", UH_T_I64, 0 }, { "next", UH_T_REF, 0 },
			      { "data", UH_T_IBYTES, VAL } };
	return uh_class_register(h, "BigRec", f, 3, &cls);
}

static void fill_value(char *buf, int k, int round)
{
	memset(buf, 'a' + (k * 7 + round) % 26, VAL);
	snprintf(buf, 32, "s%d r%d", k, round);
}

/* Block 1: RECS records, chained, under root "s<k>". */
static int make_records(uh_heap *h, int k)
{
	char name[32], *buf = malloc(VAL);
	uh_off o = 0, prev = 0;
	int rc = buf ? uh_begin(h) : UH_ENOMEM;
	if (buf)
		fill_value(buf, k, 0);
	for (int i = 0; rc == 0 && i < RECS; i++) {	/* bound: RECS */
		if ((rc = uh_alloc(h, cls, &o)) == 0 && (rc = uh_set_i64(h, o, 0, i)) == 0 &&
		    (rc = uh_set_ref(h, o, 1, prev)) == 0)
			rc = uh_set_inline(h, o, 2, buf, VAL);
		prev = o;
	}
	snprintf(name, sizeof(name), "s%d", k);
	if (rc == 0 && (rc = uh_root_set(h, name, prev)) == 0)
		rc = uh_commit(h);
	if (rc && uh_in_block(h))
		uh_abort(h);
	free(buf);
	return rc;
}

/* Block 2: every record of "s<k>" gets value round: RECS x VAL logged.
 * The root is looked up before the block, so that the block reads only
 * its own records: the other sessions' publishes change the root map
 * meanwhile, and a block that read it would lose to each of them. */
static int rewrite(uh_heap *h, int k, int round)
{
	char name[32], *buf = malloc(VAL);
	uh_off o = 0;
	int n = 0, rc = buf ? 0 : UH_ENOMEM;
	if (buf)
		fill_value(buf, k, round);
	snprintf(name, sizeof(name), "s%d", k);
	if (rc == 0)
		rc = uh_root_get(h, name, &o);
	if (rc == 0)
		rc = uh_begin(h);
	while (rc == 0 && o && n++ < RECS) {	/* bound: RECS */
		if ((rc = uh_set_inline(h, o, 2, buf, VAL)) == 0)
			rc = uh_get_ref(h, o, 1, &o);
	}
	if (rc == 0)
		rc = uh_commit(h);
	if (rc && uh_in_block(h))
		uh_abort(h);
	free(buf);
	return rc;
}

static int make_fn(uh_heap *h, int k, int round)
{
	(void)round;
	return make_records(h, k);
}

static int rewrite_fn(uh_heap *h, int k, int round)
{
	return rewrite(h, k, round);
}

/* A block run again while it loses to another session's (the root map is
 * shared) or meets a restarted heapd (once). */
static int retried(int (*fn)(uh_heap *, int, int), uh_heap *h, int k, int round)
{
	int rc = UH_ECONFLICT;
	for (unsigned i = 0; i < 200 && rc != 0; i++) {	/* bound: 200 tries */
		uh_retry_wait(h, i);	/* the backoff bindings use */
		if ((rc = fn(h, k, round)) != 0 && rc != UH_EDISCONNECTED && rc != UH_ECONFLICT)
			break;
	}
	return rc;
}

/* Every record of "s<k>" holds round's bytes. 0 or -1. */
static int records_hold(uh_heap *h, int k, int round)
{
	char name[32], *want = malloc(VAL), *got = malloc(VAL);
	uh_off o = 0;
	size_t len = 0;
	int n = 0, bad = !want || !got;
	snprintf(name, sizeof(name), "s%d", k);
	if (!bad) {
		fill_value(want, k, round);
		bad = uh_root_get(h, name, &o) != 0;
	}
	while (!bad && o && n < RECS) {	/* bound: RECS */
		bad = uh_get_inline(h, o, 2, got, VAL, &len) != 0 || len != VAL ||
		      memcmp(got, want, VAL) != 0 || uh_get_ref(h, o, 1, &o) != 0;
		n++;
	}
	free(want);
	free(got);
	return bad || n != RECS ? -1 : 0;
}

static void session_round(uh_heap *h, int k)
{
	TH_CHECK_RC(retried(make_fn, h, k, 0));
	TH_CHECK_RC(retried(rewrite_fn, h, k, 1));
	TH_CHECK_EQ(records_hold(h, k, 1), 0);
}

/* Fill with blocks of 100 chained records under roots "f<i>" until mib
 * MiB of them (or an error: its code). */
static int fill(uh_heap *h, uint64_t mib)
{
	char name[32], buf[VAL];
	memset(buf, 'f', sizeof(buf));
	for (uint64_t i = 0; i * 100 * VAL < mib * MIB; i++) {	/* bound: mib MiB */
		uh_off o = 0, prev = 0;
		int rc = uh_begin(h);
		for (int j = 0; rc == 0 && j < 100; j++) {	/* bound: 100 */
			if ((rc = uh_alloc(h, cls, &o)) == 0 && (rc = uh_set_ref(h, o, 1, prev)) == 0)
				rc = uh_set_inline(h, o, 2, buf, VAL);
			prev = o;
		}
		snprintf(name, sizeof(name), "f%llu", (unsigned long long)i);
		if (rc == 0 && (rc = uh_root_set(h, name, o)) == 0)
			rc = uh_commit(h);
		if (rc) {
			if (uh_in_block(h))
				uh_abort(h);
			return rc;
		}
	}
	return 0;
}

struct at_once {
	int k;
	uh_heap *h;
	int rc;
	char msg[512];	/* uh_errmsg() is the thread's own */
};

/* The blocks that publish take turns: they all write the root map, and
 * sixteen 1 MB blocks at once on two cores can starve one of them. The
 * attaches and the rewrites (each of its own records) run at once. */
static pthread_mutex_t publish_turn = PTHREAD_MUTEX_INITIALIZER;

static void *attach_and_write(void *arg)
{
	struct at_once *a = arg;
	a->rc = uh_connect(d.sock, 0, &a->h);
	if (a->rc == 0) {
		pthread_mutex_lock(&publish_turn);
		a->rc = retried(make_fn, a->h, a->k, 0);
		pthread_mutex_unlock(&publish_turn);
	}
	if (a->rc == 0 && (a->rc = retried(rewrite_fn, a->h, a->k, 1)) == 0)
		a->rc = records_hold(a->h, a->k, 1) ? UH_EINTERNAL : 0;
	snprintf(a->msg, sizeof(a->msg), "%s", a->rc ? uh_errmsg() : "");
	return NULL;
}

/* The chunk map of the heap file as it is now (heapd stopped). */
static uint64_t check_chunk_map(const char *when)
{
	size_t len = 0;
	uint64_t logs = 0;
	char *img = th_read_file(d.heap, &len);
	TH_CHECK(img != NULL);
	if (img && th_check_chunks(img, len, &logs) != 0)
		th_fail(__FILE__, __LINE__, "%s: the chunk map does not match its arenas and logs",
			when);
	free(img);
	return logs;
}

/* Session entries of the heap file whose redo pair is set (FORMAT.md 7). */
static int redo_pending(void)
{
	size_t len = 0;
	int n = 0;
	char *img = th_read_file(d.heap, &len);
	long at = img ? th_find_uh_header(img, len) : -1;
	if (at >= 0) {
		const struct uh_hdr *h = (const void *)(img + at);
		const struct uh_session_ent *tab = (const void *)(img + h->session_tab_off);
		for (uint32_t i = 1; i < h->session_cap; i++)	/* bound: session_cap */
			n += tab[i].state == UH_SESS_ACTIVE && tab[i].redo_off != 0;
	}
	free(img);
	return n;
}

/* heapd dies between a log extent's commit and the write of its link in
 * the extension (the session's log lies there: the pool's share for logs
 * is taken): the file's chunk map holds with the redo pair's link; the
 * next start makes the link, and the session re-attaches and commits.
 * The extent is freed with the others when the session ends. */
static uh_heap *crash_at_link(uh_heap *filler, int k)
{
	uh_heap *s = NULL;
	th_heapd_stop(&d);
	setenv("UNIHEAP_GROW_CRASH_WHERE", "log_linked", 1);
	int rc = th_heapd_start(&d, NULL);
	unsetenv("UNIHEAP_GROW_CRASH_WHERE");
	TH_CHECK_EQ(rc, 0);
	TH_CHECK_RC(uh_session_open(filler, 0, &s));
	if (!s)
		return NULL;
	if ((rc = make_records(s, k)) == 0)
		rc = rewrite(s, k, 1);
	TH_CHECK(rc != 0);
	TH_CHECK_EQ(th_wait_exit_timeout(d.pid, 10000), 128 + 9);
	d.pid = 0;
	TH_CHECK_EQ(redo_pending(), 1);
	check_chunk_map("heapd killed between an extent's commit and its link");
	TH_CHECK_EQ(th_heapd_start(&d, NULL), 0);
	TH_CHECK_EQ(redo_pending(), 0);
	TH_CHECK_RC(retried(make_fn, s, k, 0));
	TH_CHECK_RC(retried(rewrite_fn, s, k, 1));
	TH_CHECK_EQ(records_hold(s, k, 1), 0);
	return s;
}

static void grown_heap(const char *unused)
{
	(void)unused;
	uh_heap *filler = NULL, *seq[SESSIONS] = { 0 };
	struct at_once par[SESSIONS];
	pthread_t t[SESSIONS];
	static char out[8192];

	TH_CHECK_RC(th_connect(&d, 0, &filler));
	if (!filler)
		return;
	TH_CHECK_RC(register_class(filler));
	TH_CHECK_RC(fill(filler, 96));
	TH_CHECK(th_status_u64(&d, "heap_size") > 64 * MIB);

	for (int k = 0; k < SESSIONS; k++) {	/* one after another */
		int rc = uh_session_open(filler, 0, &seq[k]);
		TH_CHECK_RC(rc);
		if (rc)
			break;
		session_round(seq[k], k);
	}
	uh_heap *crashed = crash_at_link(filler, 2 * SESSIONS);
	for (int k = 0; k < SESSIONS; k++) {	/* at once */
		par[k] = (struct at_once){ SESSIONS + k, NULL, 0, "" };
		TH_CHECK_EQ(pthread_create(&t[k], NULL, attach_and_write, &par[k]), 0);
	}
	int failed = 0;
	for (int k = 0; k < SESSIONS; k++) {
		pthread_join(t[k], NULL);
		if (par[k].rc)
			th_fail(__FILE__, __LINE__, "session %d at once: %s (%s)", par[k].k,
				uh_strerror(par[k].rc), par[k].msg);
		failed |= par[k].rc != 0;
	}
	if (failed)	/* what heapd saw of the sessions */
		th_heapd_log_tail(&d, 8000);

	/* Every session attached, their extents kept: the map in the file. */
	th_heapd_kill(&d);
	TH_CHECK(check_chunk_map("heapd killed, 34 sessions attached") > 0);
	TH_CHECK_EQ(th_heapd_start(&d, NULL), 0);
	if (crashed) {
		TH_CHECK_RC(retried(rewrite_fn, crashed, 2 * SESSIONS, 2));
		TH_CHECK_EQ(records_hold(crashed, 2 * SESSIONS, 2), 0);
		uh_disconnect(crashed);
	}
	for (int k = 0; k < SESSIONS; k++) {
		if (seq[k]) {
			TH_CHECK_RC(retried(rewrite_fn, seq[k], k, 2));
			TH_CHECK_EQ(records_hold(seq[k], k, 2), 0);
		}
		if (par[k].h) {
			TH_CHECK_RC(retried(rewrite_fn, par[k].h, SESSIONS + k, 2));
			TH_CHECK_EQ(records_hold(filler, SESSIONS + k, 2), 0);
		}
	}
	for (int k = 0; k < SESSIONS; k++) {
		if (seq[k])
			uh_disconnect(seq[k]);
		if (par[k].h)
			uh_disconnect(par[k].h);
	}
	TH_CHECK_RC(uh_heap_check(filler, NULL));
	uh_disconnect(filler);
	TH_CHECK_EQ(th_heapctl(&d, "check", out, sizeof(out)), 0);
	th_heapd_stop(&d);
	TH_CHECK_EQ(check_chunk_map("every session gone"), 0);
}

/* Fill a heap to HeapFull, then attach writers until one is refused:
 * HeapFull saying so (words), heapd still serving, the heap sound. */
static void full_heap(const char *words)
{
	uh_heap *filler = NULL, *s[64] = { 0 };
	static char out[8192];
	int n = 0, rc = 0;

	TH_CHECK_RC(th_connect(&d, 0, &filler));
	if (!filler)
		return;
	TH_CHECK_RC(register_class(filler));
	TH_CHECK_ERR(fill(filler, 1024), UH_ENOSPC);
	while (n < 64 && (rc = uh_session_open(filler, 0, &s[n])) == 0)	/* bound: 64 */
		n++;
	TH_CHECK_ERR(rc, UH_ENOSPC);
	if (!strstr(uh_errmsg(), words))
		th_fail(__FILE__, __LINE__, "attach refused, no \"%s\" in: %s", words, uh_errmsg());
	/* A block that needs an extent it cannot have is rolled back. */
	if (n > 0) {
		TH_CHECK_ERR(make_records(s[0], 0), UH_ENOSPC);
		TH_CHECK(!uh_in_block(s[0]));
	}
	for (int i = 0; i < n; i++)
		uh_disconnect(s[i]);
	TH_CHECK_EQ(th_heapctl(&d, "status", out, sizeof(out)), 0);
	TH_CHECK_RC(uh_heap_check(filler, NULL));
	uh_disconnect(filler);
	TH_CHECK_EQ(th_heapctl(&d, "check", out, sizeof(out)), 0);
}

/* fn(arg) on a fresh heapd started with args, stopped and removed after. */
static void on_heap(const char *args, void (*fn)(const char *), const char *arg)
{
	memset(&d, 0, sizeof(d));
	if (th_heapd_start(&d, args) == 0)
		fn(arg);
	else
		th_fail(__FILE__, __LINE__, "heapd %s did not start", args);
	th_heapd_cleanup(&d);
}

int main(void)
{
	on_heap("--size 16M --max-size 512M", grown_heap, NULL);
	on_heap("--size 16M --max-size 16M", full_heap, "session log");
	on_heap("--size 16M --max-size 32M", full_heap, "maximum size");
	return th_summary("test_grow_attach");
}
