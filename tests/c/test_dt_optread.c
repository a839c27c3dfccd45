/*
 * test_dt_optread.c -- read-only operations outside blocks (FORMAT.md 8.8)
 * under writers: two writer processes put and remove keys of one hash map
 * and one sorted map (growing both, so the hash map resizes again and
 * again), while two reader processes do LOOKUPS lookups each, outside any
 * block, plus short scans. Every value names its key and the operation
 * that wrote it, and the writers publish each operation in a shared file
 * when it returns (prog_dt_optread.c): a reader that ever gets a torn or
 * phantom entry, a value older than a commit it knew of, or "not found"
 * for a key it knew put, fails. The readers must have answered nearly
 * all lookups optimistically (uh_stats opt_reads), or the test would not
 * test that path.
 *
 * Afterwards both maps pass their structural checks and hold, for every
 * key, exactly what its writer did last.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"
#include "prog_dt_optread.h"

#define NREADERS 2
#define LOOKUPS "1000000"	/* per reader */
#define MAX_OPS "400000"	/* per writer; they stop when the readers end */

static const char *SUITE = "test_dt_optread";
static struct th_heapd d;

static struct board *make_board(void)
{
	char path[700];

	snprintf(path, sizeof(path), "%s/pub", d.dir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, sizeof(struct board)) != 0) {
		perror(path);
		return NULL;
	}
	struct board *b = mmap(NULL, sizeof(*b), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return b == MAP_FAILED ? NULL : b;
}

static pid_t spawn(const char *role, int id, const char *n)
{
	char ids[8];
	char *argv[] = { (char *)th_bin("prog_dt_optread"), "--socket", d.sock, "--dir", d.dir,
			 (char *)role, ids, strcmp(role, "--writer") ? "--lookups" : "--ops",
			 (char *)n, NULL };

	snprintf(ids, sizeof(ids), "%d", id);
	return th_spawn(argv, NULL);
}

/* Run the writers and readers; the readers' output is checked by their
 * exit codes (2: a wrong answer, printed). */
static void run(void)
{
	pid_t wr[OPT_NWRITERS], rd[NREADERS];
	char name[32];

	for (int w = 0; w < OPT_NWRITERS; w++)
		wr[w] = spawn("--writer", w, MAX_OPS);
	for (int r = 0; r < NREADERS; r++)
		rd[r] = spawn("--reader", r, LOOKUPS);
	for (int w = 0; w < OPT_NWRITERS; w++) {
		snprintf(name, sizeof(name), "ready.w%d", w);
		TH_CHECK_EQ(th_wait_file(d.dir, name, 20000), 0);
	}
	for (int r = 0; r < NREADERS; r++) {
		snprintf(name, sizeof(name), "ready.r%d", r);
		TH_CHECK_EQ(th_wait_file(d.dir, name, 20000), 0);
	}
	TH_CHECK_EQ(th_signal_file(d.dir, "go", NULL), 0);
	for (int r = 0; r < NREADERS; r++)
		TH_CHECK_EQ(th_wait_exit_timeout(rd[r], 300000), 0);
	TH_CHECK_EQ(th_signal_file(d.dir, "stop", NULL), 0);
	for (int w = 0; w < OPT_NWRITERS; w++)
		TH_CHECK_EQ(th_wait_exit_timeout(wr[w], 120000), 0);
}

/* Each key holds what its writer's last operation on it left. */
static void verify(uh_heap *h, uh_off map, uh_off smap, const struct board *b)
{
	long wrong = 0, present = 0;
	uint64_t len = 0, slen = 0;

	TH_CHECK_RC(uh_map_check(h, map));
	TH_CHECK_RC(uh_smap_check(h, smap));
	for (int w = 0; w < OPT_NWRITERS; w++) {
		for (int q = 0; q < OPT_NKEYS; q++) {
			char buf[32];
			uh_key k = { .kind = UH_KEY_STRING, .data = buf };
			uh_value v, sv;
			uint64_t done = b->done[w][q], seq = done >> 1;
			int64_t want = done && !(done & 1) ? (int64_t)(opt_key_id(w, q) << 32 | seq) : 0;
			k.len = (size_t)snprintf(buf, sizeof(buf), "w%d.k%05d", w, q);
			int rc = uh_map_get(h, map, &k, &v), src = uh_smap_get(h, smap, &k, &sv);
			int64_t got = rc == 0 ? v.u.i : 0, sgot = src == 0 ? sv.u.i : 0;
			present += want != 0;
			if ((got != want || sgot != want) && !wrong++)
				th_fail(__FILE__, __LINE__, "%s: map %lld, sorted map %lld, want %lld",
					buf, (long long)got, (long long)sgot, (long long)want);
		}
	}
	TH_CHECK_EQ(wrong, 0);
	TH_CHECK_RC(uh_map_len(h, map, &len));
	TH_CHECK_RC(uh_smap_len(h, smap, &slen));
	TH_CHECK_EQ(len, (uint64_t)present);
	TH_CHECK_EQ(slen, (uint64_t)present);
	printf("final: %ld keys present in both maps, as the writers left them\n", present);
}

int main(void)
{
	uh_heap *h = NULL;
	uh_off map, smap;
	uh_stats st;

	if (th_heapd_start(&d, "--size 256M") != 0 || th_connect(&d, 0, &h) != 0)
		return th_summary(SUITE);
	struct board *b = make_board();
	TH_CHECK(b != NULL);
	if (!b)
		return th_summary(SUITE);
	TH_CHECK_RC(uh_map_new(h, UH_KEY_STRING, &map));
	TH_CHECK_RC(uh_smap_new(h, UH_KEY_STRING, &smap));
	TH_CHECK_RC(uh_root_set(h, "opt.map", map));
	TH_CHECK_RC(uh_root_set(h, "opt.smap", smap));

	run();
	for (int w = 0; w < OPT_NWRITERS; w++)
		printf("writer %d: %llu operations\n", w, (unsigned long long)b->ops[w]);
	verify(h, map, smap, b);

	/* This process's own gets outside blocks went the optimistic way. */
	TH_CHECK_RC(uh_stats_get(h, &st));
	TH_CHECK(st.opt_reads > 0);
	uh_disconnect(h);
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
