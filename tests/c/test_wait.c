/*
 * test_wait.c -- change notifications (uh_wait, uh_wait_any,
 * uh_change_token; FORMAT.md 8.9): which commits wake a waiter of an
 * object, of each collection and of the roots; timeouts; freed objects;
 * no lost wake-up between two processes over 100k rounds of ping-pong; a
 * waiter SIGKILLed in its wait leaves no count behind; uh_wait_cancel from
 * another thread; a wait goes on across a heapd restart and wakes on the
 * next change.
 *
 * The changes come from another session (a thread with a session of its
 * own, or another process); the waiter checks what it waited for.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "uhint.h"

static const char *SUITE = "test_wait";
static uint32_t rec_cls;

/* ---- a change made by another session, after a delay ---- */

struct later {
	uh_heap *h;		/* a session of its own */
	unsigned delay_ms;
	int (*fn)(uh_heap *h, void *arg);
	void *arg;
	int rc;
	pthread_t t;
};

static void *later_main(void *p)
{
	struct later *l = p;

	th_sleep_ms(l->delay_ms);
	l->rc = l->fn(l->h, l->arg);
	return NULL;
}

static void later_start(struct later *l, uh_heap *main, unsigned delay_ms,
			int (*fn)(uh_heap *, void *), void *arg)
{
	memset(l, 0, sizeof(*l));
	TH_CHECK_RC(uh_session_open(main, 0, &l->h));
	l->delay_ms = delay_ms;
	l->fn = fn;
	l->arg = arg;
	pthread_create(&l->t, NULL, later_main, l);
}

static int later_end(struct later *l)
{
	pthread_join(l->t, NULL);
	uh_disconnect(l->h);
	return l->rc;
}

static int set_field(uh_heap *h, void *arg)
{
	return uh_set_i64(h, *(uh_off *)arg, 0, 7);
}

static int map_put(uh_heap *h, void *arg)
{
	uh_key k = { UH_KEY_STRING, 0, "k", 1, 0 };
	uh_value v = { UH_T_I64, 0, { .i = 1 } };
	return uh_map_put(h, *(uh_off *)arg, &k, &v, 0);
}

static int smap_put(uh_heap *h, void *arg)
{
	uh_key k = { UH_KEY_I64, 0, NULL, 0, 5 };
	uh_value v = { UH_T_I64, 0, { .i = 1 } };
	return uh_smap_put(h, *(uh_off *)arg, &k, &v, 0);
}

static int list_append(uh_heap *h, void *arg)
{
	uh_value v = { UH_T_I64, 0, { .i = 1 } };
	return uh_list_append(h, *(uh_off *)arg, &v);
}

static int root_set(uh_heap *h, void *arg)
{
	return uh_root_set(h, "wait.new", *(uh_off *)arg);
}

static int obj_free(uh_heap *h, void *arg)
{
	return uh_free(h, *(uh_off *)arg);
}

static uh_off new_record(uh_heap *h)
{
	uh_off r = 0;
	TH_CHECK_RC(uh_alloc(h, rec_cls, &r));
	return r;
}

/* Wait on obj (or roots) while another session runs fn(arg) after 30 ms:
 * the wait must end by the change, with a new token. */
static void woken_by(uh_heap *h, const char *what, uh_off obj,
		     int (*fn)(uh_heap *, void *), void *arg)
{
	struct later l;
	uint64_t tok, now;

	TH_CHECK_RC(uh_change_token(h, obj, &tok));
	later_start(&l, h, 30, fn, arg);
	int rc = uh_wait(h, obj, tok, 10000000000ll, &now);
	TH_CHECK_RC(later_end(&l));
	if (rc != 1)
		fprintf(stderr, "%s: uh_wait gave %d, not woken\n", what, rc);
	TH_CHECK_EQ(rc, 1);
	TH_CHECK(now != tok);
}

static void test_what_wakes(uh_heap *h)
{
	uh_off r = new_record(h), m, sm, l;

	woken_by(h, "field", r, set_field, &r);
	int64_t v = 0;
	TH_CHECK_RC(uh_get_i64(h, r, 0, &v));
	TH_CHECK_EQ(v, 7);

	TH_CHECK_RC(uh_map_new(h, UH_KEY_STRING, &m));
	woken_by(h, "map put", m, map_put, &m);
	TH_CHECK_RC(uh_smap_new(h, UH_KEY_I64, &sm));
	woken_by(h, "sorted map put", sm, smap_put, &sm);
	TH_CHECK_RC(uh_list_new(h, &l));
	woken_by(h, "list append", l, list_append, &l);
	woken_by(h, "root set", UH_WAIT_ROOTS, root_set, &r);
	TH_CHECK_RC(uh_root_del(h, "wait.new"));
}

static void test_timeout_and_errors(uh_heap *h)
{
	uh_off r = new_record(h);
	uint64_t tok, now = 0;

	TH_CHECK_RC(uh_change_token(h, r, &tok));
	uint64_t t0 = th_now_ms();
	TH_CHECK_EQ(uh_wait(h, r, tok, 50000000ll, &now), 0);
	uint64_t took = th_now_ms() - t0;
	TH_CHECK(took >= 49);		/* honoured: not before it passed */
	TH_CHECK(took < 2000);		/* and then it returns */
	TH_CHECK_EQ(now, tok);
	/* A token other than the current one: changed already, no sleep. */
	TH_CHECK_EQ(uh_wait(h, r, tok + 1, -1, &now), 1);
	TH_CHECK_EQ(uh_wait(h, r, tok, 0, &now), 0);

	/* Waiting inside a block: refused (a block sees one snapshot). */
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_ERR(uh_wait(h, r, tok, 0, &now), UH_ESTATE);
	TH_CHECK_RC(uh_abort(h));
	uh_off objs[2] = { r, r };
	uint64_t since[2] = { tok, tok }, nows[2];
	TH_CHECK_ERR(uh_wait_any(h, 0, objs, since, 0, nows), UH_EINVAL);
	TH_CHECK_ERR(uh_wait_any(h, UH_WAIT_MAX + 1, objs, since, 0, nows), UH_EINVAL);

	/* Freed while waited on: the wait ends with UH_EFREED. */
	struct later l;
	later_start(&l, h, 30, obj_free, &r);
	TH_CHECK_ERR(uh_wait(h, r, tok, 10000000000ll, &now), UH_EFREED);
	TH_CHECK_RC(later_end(&l));
	TH_CHECK_ERR(uh_change_token(h, r, &tok), UH_EFREED);
}

static void test_wait_any(uh_heap *h)
{
	uh_off objs[3] = { new_record(h), new_record(h), 0 }, m;
	uint64_t since[3], now[3];
	struct later l;

	TH_CHECK_RC(uh_map_new(h, UH_KEY_STRING, &m));
	objs[2] = m;
	for (int i = 0; i < 3; i++)
		TH_CHECK_RC(uh_change_token(h, objs[i], &since[i]));
	later_start(&l, h, 30, set_field, &objs[1]);
	TH_CHECK_EQ(uh_wait_any(h, 3, objs, since, 10000000000ll, now), 1);
	TH_CHECK_RC(later_end(&l));
	TH_CHECK_EQ(now[0], since[0]);
	TH_CHECK(now[1] != since[1]);
	later_start(&l, h, 30, map_put, &m);
	since[1] = now[1];
	TH_CHECK_EQ(uh_wait_any(h, 3, objs, since, 10000000000ll, now), 1);
	TH_CHECK_RC(later_end(&l));
	TH_CHECK(now[2] != since[2]);
}

/* Two processes take turns on one counter, each waking the other. */
static void test_pingpong(struct th_heapd *d, uh_heap *h, long rounds)
{
	uh_off r = new_record(h);
	TH_CHECK_RC(uh_root_set(h, "wait.pingpong", r));
	char n[32];
	snprintf(n, sizeof(n), "%ld", rounds);
	char *argv[] = { (char *)th_bin("prog_wait_peer"), d->sock, "pingpong",
			 "wait.pingpong", n, "1", NULL };
	/* Slices longer than the test: a lost wake-up hangs until the 10 s
	 * bound instead of being covered by a slice's end. */
	char *env[] = { "UH_WAIT_SLICE_MS=600000", NULL };
	setenv("UH_WAIT_SLICE_MS", "600000", 1);
	pid_t peer = th_spawn(argv, env);
	TH_CHECK(peer > 0);
	long lost = 0;
	for (long i = 0; i < rounds && !lost; i++) {	/* bound: rounds */
		int64_t v;
		uint64_t tok;
		for (;;) {	/* bound: each wait is bounded */
			TH_CHECK_RC(uh_change_token(h, r, &tok));
			TH_CHECK_RC(uh_get_i64(h, r, 0, &v));
			if ((v & 1) == 0)
				break;
			uint64_t t0 = th_now_ms();
			if (uh_wait(h, r, tok, 10000000000ll, NULL) != 1 ||
			    th_now_ms() - t0 >= 9000) {	/* the bound, not a wake */
				lost = i + 1;
				break;
			}
		}
		if (!lost)
			TH_CHECK_RC(uh_set_i64(h, r, 0, v + 1));
	}
	if (lost)
		fprintf(stderr, "pingpong: no wake-up within 10 s at round %ld\n", lost - 1);
	TH_CHECK_EQ(lost, 0);
	TH_CHECK_EQ(th_wait_exit_timeout(peer, 30000), 0);
	unsetenv("UH_WAIT_SLICE_MS");
	int64_t v = 0;
	TH_CHECK_RC(uh_get_i64(h, r, 0, &v));
	TH_CHECK_EQ(v, 2 * rounds);
}

static uint32_t waiters(uh_heap *h)
{
	return __atomic_load_n(&h->hdr->waiters, __ATOMIC_ACQUIRE);
}

/* A waiter killed in its wait: heapd reaps its session and its count. */
static void test_killed_waiter(struct th_heapd *d, uh_heap *h)
{
	uh_off r = new_record(h);
	TH_CHECK_RC(uh_root_set(h, "wait.forever", r));
	char *argv[] = { (char *)th_bin("prog_wait_peer"), d->sock, "forever", "wait.forever",
			 d->dir, NULL };
	pid_t peer = th_spawn(argv, NULL);
	TH_CHECK(th_wait_file(d->dir, "waiting", 10000) == 0);
	th_sleep_ms(50);	/* into its futex wait */
	TH_CHECK_EQ(waiters(h), 1);
	th_kill(peer);
	uint64_t t0 = th_now_ms();
	while (waiters(h) != 0 && th_now_ms() - t0 < 10000)	/* bound: 10 s */
		th_sleep_ms(10);
	TH_CHECK_EQ(waiters(h), 0);
	/* And a commit after it makes no wake call: nobody waits. */
	TH_CHECK_RC(uh_set_i64(h, r, 0, 1));
}

struct restart_wait {
	uh_heap *h;
	uh_off r;
	uint64_t tok;
	int rc;
};

static void *restart_waiter(void *p)
{
	struct restart_wait *w = p;
	w->rc = uh_wait(w->h, w->r, w->tok, 30000000000ll, NULL);
	return NULL;
}

static void *forever_waiter(void *p)
{
	struct restart_wait *w = p;
	w->rc = uh_wait(w->h, w->r, w->tok, -1, NULL);
	return NULL;
}

/* uh_wait_cancel from another thread ends a wait with no timeout. */
static void test_cancel(uh_heap *h)
{
	struct restart_wait w = { 0 };
	pthread_t t;

	w.r = new_record(h);
	TH_CHECK_RC(uh_session_open(h, 0, &w.h));
	TH_CHECK_RC(uh_change_token(w.h, w.r, &w.tok));
	w.rc = -100;
	pthread_create(&t, NULL, forever_waiter, &w);
	th_sleep_ms(50);
	uh_wait_cancel(w.h);
	pthread_join(t, NULL);
	TH_CHECK_EQ(w.rc, 0);
	uh_disconnect(w.h);
}

/* heapd restarts while a thread waits: the wait goes on, re-attaches, and
 * wakes on a change made after the restart. */
static void test_heapd_restart(struct th_heapd *d, uh_heap *h)
{
	struct restart_wait w = { 0 };
	pthread_t t;

	w.r = new_record(h);
	TH_CHECK_RC(uh_root_set(h, "wait.restart", w.r));
	TH_CHECK_RC(uh_session_open(h, 0, &w.h));
	TH_CHECK_RC(uh_change_token(w.h, w.r, &w.tok));
	pthread_create(&t, NULL, restart_waiter, &w);
	th_sleep_ms(100);
	TH_CHECK_RC(th_heapd_restart(d));
	th_sleep_ms(600);	/* past the waiter's slice: it re-attached */
	TH_CHECK_RC(uh_set_i64(h, w.r, 0, 3));	/* h re-attaches first */
	pthread_join(t, NULL);
	TH_CHECK_EQ(w.rc, 1);
	uh_disconnect(w.h);
}

int main(void)
{
	static struct th_heapd d;
	static const uh_field_spec f[] = { { "n", UH_T_I64, 0 } };
	uh_heap *h;

	if (th_heapd_start(&d, NULL) != 0) {
		TH_CHECK(!"heapd start");
		return th_summary(SUITE);
	}
	if (th_connect(&d, 0, &h) == 0) {
		TH_CHECK_RC(uh_class_register(h, "WaitRec", f, 1, &rec_cls));
		test_what_wakes(h);
		test_timeout_and_errors(h);
		test_wait_any(h);
		const char *r = getenv("UH_WAIT_ROUNDS");
		test_pingpong(&d, h, r ? atol(r) : 100000);
		test_killed_waiter(&d, h);
		test_cancel(h);
		test_heapd_restart(&d, h);
		TH_CHECK_EQ(waiters(h), 0);
		uh_disconnect(h);
	}
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
