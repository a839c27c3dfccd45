/*
 * test_dt_list_mp.c -- one list shared by K=3 writer processes
 * (prog_dt_list_mp) appending their own tagged values 0, 1, 2, ... with
 * uh_run (some pairs of appends in one block), while this process scans
 * the whole list in read-only blocks over and over.
 *
 * Every scan must see, for each writer, exactly its values 0..c-1 in
 * order (no gap, no duplicate, no reordering, no half of a pair, no torn
 * or foreign element). Writers 1 and 2 append COUNT values and exit;
 * writer 3 has LONGER values to append and is SIGKILLed as soon as the
 * others are done (if it is not done itself by then). Then
 * the final list holds exactly COUNT values of writers 1 and 2 and, of
 * writer 3, its acknowledged values plus at most the block in flight
 * (1 or 2 values), each writer's in its own order. The same content is
 * found after a heapd restart, and a second restart's recovery frees
 * nothing.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static const char *SUITE = "test_dt_list_mp";
static struct th_heapd d;

enum { K = 3, COUNT = 1000, LONGER = 4000 };

static int64_t counts[K + 1] = { 0, COUNT, COUNT, LONGER };

struct scan {
	uh_off list;
	int64_t next[K + 1];	/* per writer: values seen so far */
	uint64_t len;
	char why[256];		/* first problem, "" if none */
};

static int pair_first(int64_t j, int64_t count)
{
	return j % 7 == 0 && j + 1 < count;
}

/* Writer and number of element v; 0 if it is no writer's value. */
static int decode(uh_heap *h, const uh_value *v, int64_t *p, int64_t *j)
{
	if (v->type == UH_T_I64) {
		*p = v->u.i / 1000000;
		*j = v->u.i % 1000000;
		return *p >= 1 && *p <= K && *j % 5 != 4;
	}
	const char *s;
	size_t n;
	char buf[48];
	long long pp, jj;
	if (v->type != UH_T_STRING || uh_string_get(h, v->u.ref, &s, &n) != 0 ||
	    n >= sizeof(buf))
		return 0;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (sscanf(buf, "p%lld.%lld", &pp, &jj) != 2)
		return 0;
	*p = pp;
	*j = jj;
	return *p >= 1 && *p <= K && *j % 5 == 4;
}

static int scan_body(uh_heap *h, void *arg)
{
	struct scan *sc = arg;
	int rc;

	memset(sc->next, 0, sizeof(sc->next));
	sc->why[0] = '\0';
	if ((rc = uh_list_len(h, sc->list, &sc->len)) != 0)
		return rc;
	for (uint64_t i = 0; i < sc->len; i++) {
		uh_value v;
		int64_t p, j;
		if ((rc = uh_list_get(h, sc->list, i, &v)) != 0)
			return rc;
		if (!decode(h, &v, &p, &j)) {
			snprintf(sc->why, sizeof(sc->why), "element %llu (type %u) is no "
				 "writer's value", (unsigned long long)i, v.type);
			return 0;
		}
		if (j != sc->next[p]) {
			snprintf(sc->why, sizeof(sc->why), "element %llu: writer %lld value %lld, "
				 "expected %lld", (unsigned long long)i, (long long)p,
				 (long long)j, (long long)sc->next[p]);
			return 0;
		}
		sc->next[p]++;
	}
	for (int p = 1; p <= K; p++)
		if (sc->next[p] && pair_first(sc->next[p] - 1, counts[p]))
			snprintf(sc->why, sizeof(sc->why), "writer %d: value %lld seen without "
				 "its pair", p, (long long)sc->next[p] - 1);
	return 0;
}

static int scan(uh_heap *h, uh_off list, struct scan *sc, const char *when)
{
	sc->list = list;
	int rc = uh_run(h, scan_body, sc, 10000);
	if (rc != 0) {
		th_fail(__FILE__, __LINE__, "%s: scan: %s: %s", when, uh_strerror(rc),
			uh_errmsg());
		return -1;
	}
	if (sc->why[0]) {
		th_fail(__FILE__, __LINE__, "%s: %s", when, sc->why);
		return -1;
	}
	th_passed++;
	return 0;
}

static int64_t acked(int p)
{
	char path[700], line[TH_RECORD_LEN + 2];
	int64_t n = 0, last = -1;

	snprintf(path, sizeof(path), "%s/ack.%d", d.dir, p);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		int64_t j = atoll(line);
		if (j != last + 1)
			th_fail(__FILE__, __LINE__, "writer %d acked %lld after %lld", p,
				(long long)j, (long long)last);
		last = j;
		n++;
	}
	fclose(f);
	return n;
}

static pid_t spawn_writer(int p)
{
	char id[8], cnt[16], ack[700];
	snprintf(id, sizeof(id), "%d", p);
	snprintf(cnt, sizeof(cnt), "%lld", (long long)counts[p]);
	snprintf(ack, sizeof(ack), "%s/ack.%d", d.dir, p);
	char *argv[] = { (char *)th_bin("prog_dt_list_mp"), "--socket", d.sock, "--id", id,
			 "--count", cnt, "--ack", ack, "--dir", d.dir, NULL };
	return th_spawn(argv, NULL);
}

/* Final content: writers 1, 2 complete; writer 3 acked..acked+2. */
static void check_final(uh_heap *h, uh_off list, int64_t a3, const char *when)
{
	struct scan sc;

	if (scan(h, list, &sc, when) != 0)
		return;
	TH_CHECK_EQ(sc.next[1], COUNT);
	TH_CHECK_EQ(sc.next[2], COUNT);
	TH_CHECK(sc.next[3] >= a3 && sc.next[3] <= a3 + 2);
	TH_CHECK_EQ(sc.len, (uint64_t)(sc.next[1] + sc.next[2] + sc.next[3]));
	printf("%s: %llu elements, writer 3: %lld (acked %lld)\n", when,
	       (unsigned long long)sc.len, (long long)sc.next[3], (long long)a3);
}

int main(void)
{
	uh_heap *h = NULL;
	uh_off list;
	pid_t pid[K + 1];
	struct scan sc;
	long scans = 0;

	printf("%s: no randomness of its own (seed 0); interleaving is the OS's\n", SUITE);
	if (th_heapd_start(&d, NULL) != 0 || th_connect(&d, 0, &h) != 0) {
		th_fail(__FILE__, __LINE__, "heapd start/connect");
		return th_summary(SUITE);
	}
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_list_new(h, &list));
	TH_CHECK_RC(uh_root_set(h, "dt_list.mp", list));
	TH_CHECK_RC(uh_commit(h));
	for (int p = 1; p <= K; p++)
		pid[p] = spawn_writer(p);
	for (int p = 1; p <= K; p++) {
		char ready[16];
		snprintf(ready, sizeof(ready), "ready.%d", p);
		TH_CHECK_EQ(th_wait_file(d.dir, ready, 20000), 0);
	}
	TH_CHECK_EQ(th_signal_file(d.dir, "go", NULL), 0);
	int done[K + 1] = { 0 };
	uint64_t t0 = th_now_ms();
	while ((!done[1] || !done[2]) && th_now_ms() - t0 < 60000) {
		if (scan(h, list, &sc, "concurrent scan") != 0)
			break;
		scans++;
		for (int p = 1; p <= 2; p++) {
			int rc = done[p] ? 0 : th_wait_exit_timeout(pid[p], 0);
			if (rc == -2)
				continue;
			if (!done[p])
				TH_CHECK_EQ(rc, 0);
			done[p] = 1;
		}
		th_sleep_ms(2);
	}
	TH_CHECK(done[1] && done[2]);
	for (int p = 1; p <= 2; p++)
		if (!done[p])
			th_kill(pid[p]);
	/* Kill writer 3 mid-stream (unless it is done already). */
	int rc3 = th_wait_exit_timeout(pid[3], 0);
	if (rc3 == -2)
		rc3 = th_kill(pid[3]);
	TH_CHECK(rc3 == 0 || rc3 == 128 + SIGKILL);
	int64_t a3 = acked(3);
	printf("writer 3: %s after %lld acked values\n", rc3 ? "killed" : "done",
	       (long long)a3);
	TH_CHECK_EQ(acked(1), COUNT);
	TH_CHECK_EQ(acked(2), COUNT);
	printf("%ld concurrent scans\n", scans);
	TH_CHECK(scans > 5);
	check_final(h, list, a3, "after writers");
	uh_disconnect(h);
	h = NULL;
	TH_CHECK_EQ(th_heapd_restart(&d), 0);
	if (th_connect(&d, 0, &h) == 0) {
		check_final(h, list, a3, "after restart");
		uh_disconnect(h);
		h = NULL;
	}
	TH_CHECK_EQ(th_heapd_restart(&d), 0);
	char out[1 << 14];
	uint64_t freed = 1, nulled = 1;
	TH_CHECK_EQ(th_heapctl(&d, "status --json", out, sizeof(out)), 0);
	TH_CHECK_EQ(th_find_u64(out, "freed_objects", &freed), 0);
	TH_CHECK_EQ(th_find_u64(out, "nulled_refs", &nulled), 0);
	TH_CHECK_EQ(freed, 0);
	TH_CHECK_EQ(nulled, 0);
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
