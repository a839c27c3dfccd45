/*
 * test_dt_map_mp.c -- one hash map, three processes (prog_dt_map_mp) doing
 * random puts and removes on their own keys at the same time, with pairs
 * of keys changed together in one block, while each also iterates the
 * whole map, outside blocks (every entry well formed, its own keys as it
 * wrote them) and inside read-only blocks (a snapshot: no entry twice,
 * count = len, no half-written pair). The map starts empty, so it
 * resizes several times while all of this runs.
 *
 * Worker 0 is SIGKILLed part way (heapd reaps its session, rolling its
 * block in flight back or forward); the others must go on.
 *
 * Final content (checked live, after a heapd restart, and after a second
 * one whose recovery must free nothing) = the merge of every worker's
 * acknowledged operations, with worker 0's operation in flight either
 * done or not, as a whole.
 *
 * UH_TEST_SEED=n replays the kill point (the workers' own choices depend
 * on their pids).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

#define NPROC 3
#define NKEYS 300	/* as in prog_dt_map_mp.c */
#define NPAIRS 20
#define OPS "1500"
#define KILLED (128 + 9)

static const char *SUITE = "test_dt_map_mp";
static struct th_heapd d;

/* Expected value per key (0: absent); for the one op in flight of the
 * killed worker, its value if it happened. */
struct expect {
	int64_t key[NPROC][NKEYS];
	int64_t pair[NPROC][NPAIRS];
	int pending;		/* 1 if worker 0 has an op in flight */
	int pend_w, pend_pair, pend_k;
	int64_t pend_val;
};

static struct expect ex;

/* Replay worker w's log into ex. Returns acknowledged ops, -1 on error. */
static long replay(int w)
{
	char path[700], line[128], kind, op;
	long acked = 0;
	int k, in_flight = 0, cur_k = 0, cur_pair = 0;
	long long val, cur_val = 0;

	snprintf(path, sizeof(path), "%s/ack.%d", d.dir, w);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == 'A') {
			if (!in_flight)
				return -1;
			if (cur_pair)
				ex.pair[w][cur_k] = cur_val;
			else
				ex.key[w][cur_k] = cur_val;
			in_flight = 0;
			acked++;
			continue;
		}
		if (sscanf(line, "I %c %c%d %lld", &op, &kind, &k, &val) != 4 || in_flight)
			break;	/* a torn last line cannot happen: one write each */
		in_flight = 1;
		cur_pair = kind == 'a';
		cur_k = k;
		cur_val = op == 'P' ? val : 0;
	}
	fclose(f);
	if (in_flight) {
		ex.pending = 1;
		ex.pend_w = w;
		ex.pend_pair = cur_pair;
		ex.pend_k = cur_k;
		ex.pend_val = cur_val;
	}
	return acked;
}

struct seen_all {
	int64_t key[NPROC][NKEYS];
	int64_t pair[NPROC][2][NPAIRS];
	long n, twice, malformed;
	uint64_t len;
};

static int collect_body(uh_heap *h, void *arg)
{
	struct seen_all *s = arg;
	uh_off m;
	uh_iter it;
	uh_key k;
	uh_value v;
	char buf[40], kind;
	int w, q, n, rc;

	memset(s, 0, sizeof(*s));
	memset(&it, 0, sizeof(it));
	if ((rc = uh_root_get(h, "dt_map.mp", &m)) != 0 || (rc = uh_map_len(h, m, &s->len)) != 0)
		return rc;
	while ((rc = uh_map_next(h, m, &it, &k, &v)) == 0) {
		s->n++;
		if (k.len >= sizeof(buf)) {
			s->malformed++;
			continue;
		}
		memcpy(buf, k.data, k.len);
		buf[k.len] = 0;
		if (sscanf(buf, "w%d.%c%d%n", &w, &kind, &q, &n) != 3 || w < 0 || w >= NPROC ||
		    q < 0 || (kind == 'k' ? q >= NKEYS : q >= NPAIRS)) {
			s->malformed++;
			continue;
		}
		int64_t *slot = kind == 'k' ? &s->key[w][q] :
				kind == 'a' ? &s->pair[w][0][q] : &s->pair[w][1][q];
		s->twice += *slot != 0;
		*slot = v.u.i;
	}
	return rc == UH_ENOTFOUND ? 0 : rc;
}

/* The map equals the merge of the acknowledged operations. */
static void verify(uh_heap *h, const char *when)
{
	static struct seen_all s;
	uh_off m = 0;
	long wrong = 0, pend_done = -1;

	TH_CHECK_RC(uh_root_get(h, "dt_map.mp", &m));
	TH_CHECK_RC(uh_map_check(h, m));
	TH_CHECK_RC(uh_run(h, collect_body, &s, 0));
	TH_CHECK_EQ(s.malformed, 0);
	TH_CHECK_EQ(s.twice, 0);
	TH_CHECK_EQ((uint64_t)s.n, s.len);
	if (ex.pending) {
		int w = ex.pend_w, q = ex.pend_k;
		int64_t now = ex.pend_pair ? s.pair[w][0][q] : s.key[w][q];
		int64_t before = ex.pend_pair ? ex.pair[w][q] : ex.key[w][q];
		pend_done = now == ex.pend_val && now != before;
		if (now != ex.pend_val && now != before)
			wrong++;
	}
	for (int w = 0; w < NPROC; w++) {
		for (int q = 0; q < NKEYS; q++) {
			int skip = ex.pending && !ex.pend_pair && w == ex.pend_w && q == ex.pend_k;
			if (!skip && s.key[w][q] != ex.key[w][q] && !wrong++)
				th_fail(__FILE__, __LINE__, "%s: w%d.k%d is %lld, want %lld", when, w,
					q, (long long)s.key[w][q], (long long)ex.key[w][q]);
		}
		for (int q = 0; q < NPAIRS; q++) {
			int skip = ex.pending && ex.pend_pair && w == ex.pend_w && q == ex.pend_k;
			if (s.pair[w][0][q] != s.pair[w][1][q] && !wrong++)
				th_fail(__FILE__, __LINE__, "%s: pair w%d.%d is half there", when, w, q);
			if (!skip && s.pair[w][0][q] != ex.pair[w][q] && !wrong++)
				th_fail(__FILE__, __LINE__, "%s: pair w%d.a%d is %lld, want %lld", when,
					w, q, (long long)s.pair[w][0][q], (long long)ex.pair[w][q]);
		}
	}
	TH_CHECK_EQ(wrong, 0);
	printf("%s: %ld entries as acknowledged (op in flight: %s)\n", when, s.n,
	       pend_done < 0 ? "none" : pend_done ? "done" : "not done");
}

static pid_t spawn_worker(int w)
{
	char id[8];
	char *argv[] = { (char *)th_bin("prog_dt_map_mp"), "--socket", d.sock, "--id", id,
			 "--ops", OPS, "--dir", d.dir, NULL };

	snprintf(id, sizeof(id), "%d", w);
	return th_spawn(argv, NULL);
}

/* Lines in worker w's log (about 2 per operation). */
static long log_lines(int w)
{
	char path[700];

	snprintf(path, sizeof(path), "%s/ack.%d", d.dir, w);
	return th_count_lines(path);
}

static void run_workers(long kill_after)
{
	pid_t pid[NPROC];
	char name[32];

	for (int w = 0; w < NPROC; w++)
		pid[w] = spawn_worker(w);
	for (int w = 0; w < NPROC; w++) {
		snprintf(name, sizeof(name), "ready.%d", w);
		TH_CHECK_EQ(th_wait_file(d.dir, name, 20000), 0);
	}
	TH_CHECK_EQ(th_signal_file(d.dir, "go", NULL), 0);
	uint64_t t0 = th_now_ms();
	while (log_lines(0) < kill_after && th_now_ms() - t0 < 20000)
		th_sleep_ms(2);
	int rc0 = th_kill(pid[0]);
	printf("worker 0 %s after %ld log lines\n", rc0 == KILLED ? "killed" : "had exited",
	       log_lines(0));
	for (int w = 1; w < NPROC; w++)
		TH_CHECK_EQ(th_wait_exit_timeout(pid[w], 120000), 0);
}

int main(void)
{
	const char *seed_env = getenv("UH_TEST_SEED");
	uint64_t seed = seed_env ? strtoull(seed_env, NULL, 0) : (uint64_t)time(NULL);
	uh_heap *h = NULL;
	uh_off m;
	static char out[1 << 16];
	uint64_t freed = 1, nulled = 1;

	printf("%s: seed %llu (UH_TEST_SEED=%llu replays)\n", SUITE, (unsigned long long)seed,
	       (unsigned long long)seed);
	if (th_heapd_start(&d, NULL) != 0 || th_connect(&d, 0, &h) != 0)
		return th_summary(SUITE);
	TH_CHECK_RC(uh_map_new(h, UH_KEY_STRING, &m));
	TH_CHECK_RC(uh_root_set(h, "dt_map.mp", m));

	run_workers(400 + (long)(seed % 1200));
	for (int w = 0; w < NPROC; w++) {
		long n = replay(w);
		TH_CHECK(n >= 0);
		printf("worker %d: %ld acknowledged operations\n", w, n);
	}
	verify(h, "live");

	uh_disconnect(h);
	TH_CHECK_EQ(th_heapd_restart(&d), 0);
	TH_CHECK_EQ(th_connect(&d, 0, &h), 0);
	verify(h, "after restart");
	uh_disconnect(h);
	TH_CHECK_EQ(th_heapd_restart(&d), 0);
	TH_CHECK_EQ(th_heapctl(&d, "status --json", out, sizeof(out)), 0);
	TH_CHECK_EQ(th_find_u64(out, "freed_objects", &freed), 0);
	TH_CHECK_EQ(th_find_u64(out, "nulled_refs", &nulled), 0);
	TH_CHECK_EQ(freed, 0);
	TH_CHECK_EQ(nulled, 0);
	TH_CHECK_EQ(th_connect(&d, 0, &h), 0);
	verify(h, "after second restart");
	uh_disconnect(h);
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
