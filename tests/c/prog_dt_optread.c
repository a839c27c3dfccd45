/*
 * prog_dt_optread.c -- one process of test_dt_optread: a writer changing,
 * or a reader looking up, the string-keyed hash map "opt.map" and sorted
 * map "opt.smap" (both under those roots) outside blocks.
 *
 *   prog_dt_optread --socket S --dir D --writer W --ops N
 *   prog_dt_optread --socket S --dir D --reader R --lookups N
 *
 * Writer W owns keys "w<W>.k<Q>", Q < NKEYS, and runs N operations (or
 * until D/stop exists); operation i puts (3 in 4) or removes one of the
 * keys Q < 16 + i / 2, in both maps in one block, so both grow through
 * the run and the hash map resizes again and again under the readers. A
 * put's value is (W * NKEYS + Q + 1) << 32 | i + 1: it names its key and
 * the operation that wrote it.
 *
 * What the writers did is published in D/pub, a shared mapping (struct
 * board): before operation i the writer stores its key in hist[W][i + 1]
 * and i + 1 in pending[W][Q]; after it returned, (i + 1) << 1 | removed in
 * done[W][Q], and i + 1 in ops[W].
 *
 * Reader R does N lookups (uh_map_get, every third one uh_smap_get) of
 * keys the writers have begun to touch and checks each against the board:
 *  - done = done[W][Q] is read before the lookup: that commit is known to
 *    be in, so a value older than it is stale, and so is "not found"
 *    after a put when no later operation on the key has begun (pending,
 *    read after the lookup, still the same);
 *  - a value found must name its key (else torn or phantom) and an
 *    operation that put exactly this key (hist).
 * Every 64th lookup is instead a scan of up to 8 sorted-map entries from
 * the key, each step outside a block: keys ascending, every value naming
 * its key. It prints its counters (uh_stats opt_*), exits 0, 2 on a wrong
 * answer (printed), 1 on an unexpected error.
 *
 * Each process creates D/ready.<role><id> after connecting, waits for
 * D/go.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"
#include "prog_dt_optread.h"

static uh_heap *h;
static uh_off map, smap;
static struct board *b;
static const char *dir;
static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void)
{
	return th_xorshift64(&rng);
}

static void die(const char *what, int rc)
{
	fprintf(stderr, "prog_dt_optread: %s: %s: %s\n", what, uh_strerror(rc), uh_errmsg());
	exit(1);
}

static uh_key skey(char *buf, size_t len, int w, int q)
{
	uh_key k = { .kind = UH_KEY_STRING };
	k.len = (size_t)snprintf(buf, len, "w%d.k%05d", w, q);
	k.data = buf;
	return k;
}

static void map_board(void)
{
	char path[700];

	snprintf(path, sizeof(path), "%s/pub", dir);
	int fd = open(path, O_RDWR);
	if (fd < 0) {
		perror(path);
		exit(1);
	}
	b = mmap(NULL, sizeof(*b), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (b == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
}

static void rendezvous(const char *me)
{
	if (th_signal_file(dir, me, NULL) != 0 || th_wait_file(dir, "go", 60000) != 0) {
		fprintf(stderr, "prog_dt_optread: no go\n");
		exit(1);
	}
}

/* ---- writers ---- */

struct op {
	int w, q;
	int64_t val;	/* 0: remove */
};

static int op_body(uh_heap *hh, void *arg)
{
	const struct op *op = arg;
	uh_value v = { .type = UH_T_I64, .u.i = op->val };
	char buf[32];
	uh_key k = skey(buf, sizeof(buf), op->w, op->q);
	int rc;

	if (op->val) {
		if ((rc = uh_map_put(hh, map, &k, &v, 0)) != 0)
			return rc;
		return uh_smap_put(hh, smap, &k, &v, 0);
	}
	if ((rc = uh_map_remove(hh, map, &k, NULL, 0)) != 0 && rc != UH_ENOTFOUND)
		return rc;
	rc = uh_smap_remove(hh, smap, &k, NULL, 0);
	return rc == UH_ENOTFOUND ? 0 : rc;
}

static void writer(int w, uint64_t nops)
{
	char stop[700];

	snprintf(stop, sizeof(stop), "%s/stop", dir);
	for (uint64_t i = 0; i < nops && i + 1 < OPT_MAXSEQ; i++) {
		if (i % 256 == 0 && access(stop, F_OK) == 0)
			break;
		uint64_t span = 16 + i / 2 < OPT_NKEYS ? 16 + i / 2 : OPT_NKEYS;
		struct op op = { w, (int)(rnd() % span), 0 };
		uint64_t seq = i + 1;
		int put = rnd() % 4 != 0;
		if (put)
			op.val = (int64_t)((opt_key_id(w, op.q) << 32) | seq);
		__atomic_store_n(&b->hist[w][seq], (uint32_t)(op.q + 1) | (put ? 0 : OPT_REMOVED),
				 __ATOMIC_RELEASE);
		__atomic_store_n(&b->pending[w][op.q], seq, __ATOMIC_RELEASE);
		int rc = uh_run(h, op_body, &op, 0);
		if (rc)
			die("writer op", rc);
		__atomic_store_n(&b->done[w][op.q], seq << 1 | (uint64_t)!put, __ATOMIC_RELEASE);
		__atomic_store_n(&b->ops[w], seq, __ATOMIC_RELEASE);
	}
	printf("writer %d: %llu operations\n", w, (unsigned long long)b->ops[w]);
}

/* ---- readers ---- */

static long hits, misses, scans, steps;

static void wrong(const char *what, int w, int q, int64_t val, uint64_t done, uint64_t pend)
{
	fprintf(stderr, "prog_dt_optread: %s: key w%d.k%05d value %llx (op %llu), known done "
		"op %llu%s, pending %llu\n", what, w, q, (unsigned long long)val,
		(unsigned long long)((uint64_t)val & 0xffffffffu), (unsigned long long)(done >> 1),
		done & 1 ? " (remove)" : "", (unsigned long long)pend);
	exit(2);
}

/* A value found for key (w, q): its own, put by an operation that put
 * exactly this key, and not older than what was known done before. */
static void check_found(int w, int q, int64_t val, uint64_t done)
{
	uint64_t seq = (uint64_t)val & 0xffffffffu;

	if ((uint64_t)val >> 32 != opt_key_id(w, q))
		wrong("value of another key (torn or phantom)", w, q, val, done, 0);
	if (seq == 0 || seq >= OPT_MAXSEQ ||
	    __atomic_load_n(&b->hist[w][seq], __ATOMIC_ACQUIRE) != (uint32_t)(q + 1))
		wrong("value no operation put there (phantom)", w, q, val, done, 0);
	if (done && (seq < done >> 1 || (seq == done >> 1 && (done & 1))))
		wrong("value older than a known commit (stale)", w, q, val, done, 0);
}

static void lookup(uint64_t i)
{
	int w = (int)(rnd() % OPT_NWRITERS);
	uint64_t ops = __atomic_load_n(&b->ops[w], __ATOMIC_ACQUIRE);
	uint64_t span = 16 + ops / 2 < OPT_NKEYS ? 16 + ops / 2 : OPT_NKEYS;
	int q = (int)(rnd() % span);
	char buf[32];
	uh_key k = skey(buf, sizeof(buf), w, q);
	uh_value v;
	uint64_t done = __atomic_load_n(&b->done[w][q], __ATOMIC_ACQUIRE);
	int rc = i % 3 == 2 ? uh_smap_get(h, smap, &k, &v) : uh_map_get(h, map, &k, &v);
	uint64_t pend = __atomic_load_n(&b->pending[w][q], __ATOMIC_ACQUIRE);

	if (rc == 0) {
		if (v.type != UH_T_I64)
			wrong("value of the wrong type", w, q, v.u.i, done, pend);
		check_found(w, q, v.u.i, done);
		hits++;
	} else if (rc == UH_ENOTFOUND) {
		if (done && !(done & 1) && pend == done >> 1)
			wrong("not found after a known put (stale)", w, q, 0, done, pend);
		misses++;
	} else {
		die(i % 3 == 2 ? "smap get" : "map get", rc);
	}
}

/* Up to 8 entries from a random key on, each step its own read. */
static void scan(void)
{
	int w = (int)(rnd() % OPT_NWRITERS);
	char buf[32], prev[32] = "";
	uh_key from = skey(buf, sizeof(buf), w, (int)(rnd() % OPT_NKEYS)), k;
	uh_iter it;
	uh_value v;
	int rc, kw, kq, n;

	if ((rc = uh_smap_scan(h, smap, &from, 0, &it)) != 0)
		die("scan", rc);
	for (int s = 0; s < 8 && (rc = uh_smap_next(h, smap, &it, &k, &v)) == 0; s++) {
		char key[32];
		if (k.len >= sizeof(key) || v.type != UH_T_I64)
			wrong("malformed entry in a scan", -1, -1, v.u.i, 0, 0);
		memcpy(key, k.data, k.len);
		key[k.len] = 0;
		if (sscanf(key, "w%d.k%d%n", &kw, &kq, &n) != 2 || (size_t)n != k.len || kw < 0 ||
		    kw >= OPT_NWRITERS || kq < 0 || kq >= OPT_NKEYS)
			wrong("key no writer puts in a scan", -1, -1, v.u.i, 0, 0);
		if (strcmp(key, prev) <= 0 || strcmp(key, buf) < 0)
			wrong("scan out of order", kw, kq, v.u.i, 0, 0);
		check_found(kw, kq, v.u.i, 0);
		snprintf(prev, sizeof(prev), "%s", key);
		steps++;
	}
	if (rc != 0 && rc != UH_ENOTFOUND)
		die("scan step", rc);
	scans++;
}

static void reader(int r, uint64_t n)
{
	uh_stats st;

	rng += (uint64_t)r * 0x9e3779b97f4a7c15ull;
	for (uint64_t i = 0; i < n; i++) {
		if (i % 64 == 63)
			scan();
		else
			lookup(i);
	}
	if (uh_stats_get(h, &st) != 0)
		die("stats", UH_EINTERNAL);
	/* Else the lookups took blocks and this test missed its point. */
	if (st.opt_reads < n / 2) {
		fprintf(stderr, "prog_dt_optread: only %llu of %llu reads were optimistic\n",
			(unsigned long long)st.opt_reads, (unsigned long long)n);
		exit(2);
	}
	printf("reader %d: lookups=%llu hits=%ld misses=%ld scans=%ld steps=%ld "
	       "opt_reads=%llu opt_retries=%llu opt_fallbacks=%llu\n", r,
	       (unsigned long long)n, hits, misses, scans, steps,
	       (unsigned long long)st.opt_reads, (unsigned long long)st.opt_retries,
	       (unsigned long long)st.opt_fallbacks);
}

int main(int argc, char **argv)
{
	const char *sock = NULL;
	int w = -1, r = -1;
	uint64_t n = 0;
	char me[32];

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--socket"))
			sock = argv[i + 1];
		else if (!strcmp(argv[i], "--dir"))
			dir = argv[i + 1];
		else if (!strcmp(argv[i], "--writer"))
			w = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--reader"))
			r = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--ops") || !strcmp(argv[i], "--lookups"))
			n = strtoull(argv[i + 1], NULL, 10);
	}
	if (!sock || !dir || (w < 0) == (r < 0) || w >= OPT_NWRITERS) {
		fprintf(stderr, "usage: prog_dt_optread --socket S --dir D "
			"(--writer W --ops N | --reader R --lookups N)\n");
		return 1;
	}
	setenv("UNIHEAP_SOCKET", sock, 1);
	int rc = uh_connect(NULL, 0, &h);
	if (rc)
		die("connect", rc);
	if ((rc = uh_root_get(h, "opt.map", &map)) != 0 ||
	    (rc = uh_root_get(h, "opt.smap", &smap)) != 0)
		die("roots", rc);
	map_board();
	rng ^= (uint64_t)getpid() << 20;
	snprintf(me, sizeof(me), "ready.%c%d", w >= 0 ? 'w' : 'r', w >= 0 ? w : r);
	rendezvous(me);
	if (w >= 0)
		writer(w, n);
	else
		reader(r, n);
	fflush(stdout);
	uh_disconnect(h);
	return 0;
}
