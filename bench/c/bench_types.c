/*
 * bench_types.c -- the costs of uniheap's hash map and sorted map against
 * LMDB (liblmdb), in the same run, with the same keys and values. One
 * process, one thread; the heap (a private heapd) and the LMDB
 * environment both on tmpfs; durability memory, then sync. Prints one
 * table; never a test (no pass/fail).
 *
 * Keys: "user" + 19-digit zero-padded number, the number an FNV-1a hash of
 * the record index (YCSB-style, so loading goes in random key order).
 * Values: 100 bytes. The hash map keeps them inside the key's entry
 * (uh_map_put_bytes: one object per record); the sorted map holds the
 * reference of a bytes object (uh_bytes_new, then uh_smap_put); LMDB
 * copies the 100 bytes into its leaf.
 *
 * Rows, per store: ns per put while loading N records (1000 per
 * block/txn), per put of one record per block/txn (a smaller sample of
 * new keys; for uniheap the value object is made in the same block), per
 * get of a random existing key (uniheap: outside a block, LMDB: in one
 * long read txn; then 100 gets per block/read txn; then one get per
 * block/read txn), per forward scan of 100 entries from a random key
 * (sorted map and LMDB cursor; then the sorted map's entries taken up to
 * 100 per uh_smap_next_n call, beside the same cursor scan again: LMDB
 * has no batch call), and bytes per record: uniheap the growth
 * of heapd's arena_bytes over the load (key copy, value object, entry or
 * node share), LMDB the pages in use ((last_pgno+1) * psize) over N.
 * A get returns the value's handle only (uniheap: the bytes reference,
 * LMDB: pointer and length); neither reads the 100 bytes. One more row
 * gets and copies them out, as a user's get does (uniheap: uh_*_get,
 * uh_value_bytes and a copy, outside a block; LMDB: mdb_get and a copy in
 * the long read txn); no writer runs meanwhile, so neither checks the
 * copy against a concurrent replace (a binding's uh_copy_values does).
 *
 * Readers scale: in memory mode, gets/s of the hash map and the sorted
 * map by 1 and then 2 reader processes at once (each its own connection,
 * random keys, no block), and the ratio of the two.
 *
 * Memory: durability memory vs MDB_NOSYNC|MDB_NOMETASYNC|MDB_WRITEMAP
 * (both survive a process crash, not power loss). Sync: durability sync
 * vs LMDB's default flags (both sync at every commit).
 *
 * N = 1,000,000 by default; BENCH_SCALE=<f> scales it and every sample
 * count. A short calibration load first projects the run time; N shrinks
 * so the whole run stays near BENCH_BUDGET_S seconds (default 170).
 * BENCH_TYPES=<words> runs only the stores and modes named (map, smap,
 * memory, sync; e.g. "smap memory"; "readers" adds the readers rows),
 * for quick looks: the rest print as "-".
 */
#include <errno.h>
#include <lmdb.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_lmdb.h"
#include "bench_util.h"
#include "harness.h"

enum { M_MEMORY, M_SYNC, NMODES };
static const char *mode_name[NMODES] = { "memory", "sync" };

enum { S_MAP, S_SMAP, S_LMDB, NSTORES };

enum {
	R_LOAD, R_PUT1, R_GET, R_GETV, R_GET100, R_GET1, R_SCAN, R_SCANN, R_BYTES, NROWS
};
static const char *row_name[NROWS] = {
	"put, load (1000 per block/txn)",
	"put, 1 per block/txn (sample)",
	"get, no block / long read txn",
	"get + copy value, same",
	"get, 100 per block/read txn",
	"get, 1 per block/read txn",
	"scan 100 entries, random start",
	"scan 100, uh_smap_next_n / cursor",
	"bytes per record",
};
static const char *row_unit[NROWS] = { "ns", "ns", "ns", "ns", "ns", "ns", "ns", "ns", "B" };

/* -1 = not measured (a hash map has no ordered scan). */
static double result[NMODES][NROWS][NSTORES];

/* Gets per second by 1 and by 2 reader processes, per uniheap store. */
static double reader_rate[2][2];
static char *self;		/* argv[0]: readers() runs it with --reader */

static double scale = 1.0;
static long n_rec;		/* records loaded */
static long n_one;		/* single-put sample: keys n_rec .. n_rec+n_one-1 */
static long n_get;		/* random gets per kind */
static long n_scan;		/* scans of 100 */

#define KEY_LEN BENCH_KEY_LEN
#define VAL_LEN 100
#define SCAN_LEN 100
#define BATCH 1000
#define HEAP_SIZE "4G"
#define LOG_SIZE "16M"	/* a block of 1000 sorted-map puts outgrows the default 1M */
#define LMDB_MAPSIZE (4ull << 30)

static char (*keys)[KEY_LEN + 1];

static void must(int rc, const char *what)
{
	bench_must("bench_types", rc, what);
}

static void must_mdb(int rc, const char *what)
{
	bench_mdb_must("bench_types", rc, what);
}

static void make_keys(void)
{
	keys = malloc((size_t)(n_rec + n_one) * sizeof(*keys));
	if (!keys) {
		fprintf(stderr, "bench_types: out of memory for %ld keys\n", n_rec + n_one);
		exit(1);
	}
	for (long i = 0; i < n_rec + n_one; i++)
		bench_ycsb_key((uint64_t)i, keys[i]);
}

/* xorshift64: cheap enough not to show in a get's cost. */
static uint64_t rng = 88172645463325252ull;
static long rand_rec(void)
{
	return (long)(th_xorshift64(&rng) % (uint64_t)n_rec);
}

static void fill_value(long i, char v[VAL_LEN])
{
	memset(v, 'a' + (int)(i % 26), VAL_LEN);
}

/* ------------------------------------------------------------ uniheap */

/* The hash map and the sorted map have the same put/get shape. */
struct kind {
	const char *name;
	int (*make)(uh_heap *, uint32_t, uh_off *);
	int (*put)(uh_heap *, uh_off, const uh_key *, const uh_value *, uint32_t);
	int (*get)(uh_heap *, uh_off, const uh_key *, uh_value *);
};
static const struct kind kinds[2] = {
	{ "map", uh_map_new, uh_map_put, uh_map_get },
	{ "smap", uh_smap_new, uh_smap_put, uh_smap_get },
};

static uh_key str_key(const char *k)
{
	return (uh_key){ .kind = UH_KEY_STRING, .data = k, .len = KEY_LEN };
}

static int status_u64(struct th_heapd *d, const char *key, uint64_t *v)
{
	static char out[1 << 14];

	if (th_heapctl(d, "status --json", out, sizeof(out)) != 0)
		return -1;
	return th_find_u64(out, key, v);
}

/* The put every uniheap put row times: the hash map's of the bytes
 * (inline in the entry), the sorted map's of a new bytes object. */
static void put_rec(uh_heap *h, const struct kind *k, uh_off m, const char *key, long i)
{
	char data[VAL_LEN];
	uh_value v = { .type = UH_T_BYTES };
	uh_key uk = str_key(key);

	fill_value(i, data);
	if (k->put == uh_map_put) {
		must(uh_map_put_bytes(h, m, &uk, UH_T_BYTES, data, VAL_LEN, 0), "put_bytes");
		return;
	}
	must(uh_bytes_new(h, data, VAL_LEN, &v.u.ref), "bytes_new");
	must(k->put(h, m, &uk, &v, 0), "put");
}

static uh_off uh_make_root(uh_heap *h, const struct kind *k, const char *root)
{
	uh_off m;

	must(uh_begin(h), "begin");
	must(k->make(h, UH_KEY_STRING, &m), "new map");
	must(uh_root_set(h, root, m), "root_set");
	must(uh_commit(h), "commit");
	return m;
}

/* Load keys[from .. from+n) in blocks of BATCH; ns per put. */
static double uh_load(uh_heap *h, const struct kind *k, uh_off m, long from, long n)
{
	uint64_t t0 = bench_now_ns();

	for (long i = from; i < from + n;) {
		must(uh_begin(h), "begin");
		for (int j = 0; j < BATCH && i < from + n; j++, i++)
			put_rec(h, k, m, keys[i], i);
		must(uh_commit(h), "commit load block");
	}
	return (double)(bench_now_ns() - t0) / (double)n;
}

static double uh_put_singles(uh_heap *h, const struct kind *k, uh_off m)
{
	uint64_t t0 = bench_now_ns();

	for (long i = n_rec; i < n_rec + n_one; i++) {
		must(uh_begin(h), "begin");
		put_rec(h, k, m, keys[i], i);
		must(uh_commit(h), "commit single put");
	}
	return (double)(bench_now_ns() - t0) / (double)n_one;
}

/* per_block 0: no block; else blocks of per_block gets. copy: each get
 * also copies the value's bytes out. ns per get. */
static double uh_gets(uh_heap *h, const struct kind *k, uh_off m, int per_block, int copy)
{
	long n = per_block == 1 ? n_get / 10 : n_get;
	uint64_t sum = 0, t0 = bench_now_ns();
	uh_value v;
	char buf[VAL_LEN];

	for (long i = 0; i < n;) {
		if (per_block)
			must(uh_begin(h), "begin");
		for (int j = 0; j < (per_block ? per_block : 1) && i < n; j++, i++) {
			uh_key uk = str_key(keys[rand_rec()]);
			must(k->get(h, m, &uk, &v), "get");
			sum += v.u.ref;
			if (copy) {
				const void *data;
				size_t len;
				must(uh_value_bytes(h, &v, &data, &len), "value_bytes");
				memcpy(buf, data, len < VAL_LEN ? len : VAL_LEN);
				sum += (unsigned char)buf[len / 2 % VAL_LEN];
			}
		}
		if (per_block)
			must(uh_commit(h), "commit read block");
	}
	if (sum == 0)
		fprintf(stderr, "bench_types: every value was null\n");
	return (double)(bench_now_ns() - t0) / (double)n;
}

/* batch: the entries come SCAN_LEN at most per uh_smap_next_n call,
 * else one per uh_smap_next call. */
static double uh_scans(uh_heap *h, uh_off m, int batch)
{
	uint64_t sum = 0, t0 = bench_now_ns();
	uh_iter it;
	uh_key rk[SCAN_LEN];
	uh_value v[SCAN_LEN];
	uint32_t got;

	for (long i = 0; i < n_scan; i++) {
		uh_key from = str_key(keys[rand_rec()]);
		must(uh_smap_scan(h, m, &from, 0, &it), "smap_scan");
		for (int j = 0; j < SCAN_LEN; j += (int)got) {
			int rc = batch ? uh_smap_next_n(h, m, &it, rk, v, SCAN_LEN - (uint32_t)j, &got)
				       : (got = 1, uh_smap_next(h, m, &it, rk, v));
			if (rc == UH_ENOTFOUND)
				break;
			must(rc, "smap_next");
			for (uint32_t e = 0; e < got; e++)
				sum += v[e].u.ref + rk[e].len;
		}
	}
	if (sum == 0)
		fprintf(stderr, "bench_types: scans saw nothing\n");
	return (double)(bench_now_ns() - t0) / (double)n_scan;
}

/* One reader process (bench_types --reader SOCKET STORE N_REC N FD_GO
 * FD_OUT, run by readers()): connect, make the keys, wait for the go
 * byte, time n gets, write the ns taken to FD_OUT. */
static int reader_main(char **argv)
{
	const struct kind *k = &kinds[atoi(argv[3]) != 0];
	long n = atol(argv[5]);
	int go = atoi(argv[6]), out = atoi(argv[7]);
	uh_heap *h = NULL;
	uh_off m;
	uh_value v;
	char c;
	uint64_t sum = 0;

	n_rec = atol(argv[4]);
	n_one = 0;
	make_keys();
	setenv("UNIHEAP_SOCKET", argv[2], 1);
	if (uh_connect(NULL, 0, &h) != 0 || uh_root_get(h, k->name, &m) != 0)
		return 1;
	rng ^= (uint64_t)getpid() << 16;
	if (read(go, &c, 1) != 1)
		return 1;
	uint64_t t0 = bench_now_ns();
	for (long i = 0; i < n; i++) {
		uh_key uk = str_key(keys[rand_rec()]);
		if (k->get(h, m, &uk, &v) != 0)
			_exit(1);
		sum += v.u.ref;
	}
	uint64_t ns = bench_now_ns() - t0 + (sum == 0);
	uh_disconnect(h);
	return write(out, &ns, sizeof(ns)) == sizeof(ns) ? 0 : 1;
}

/* Gets per second of nproc reader processes together. */
static double readers(struct th_heapd *d, const struct kind *k, int nproc)
{
	int go[2], out[2];
	long n = n_get;
	double rate = 0;

	if (pipe(go) != 0 || pipe(out) != 0)
		return -1;
	char store[4], nrec[24], ngets[24], fgo[12], fout[12];
	char *argv[] = { self, "--reader", d->sock, store, nrec, ngets, fgo, fout, NULL };
	pid_t pid[2];

	snprintf(store, sizeof(store), "%d", k == &kinds[S_SMAP]);
	snprintf(nrec, sizeof(nrec), "%ld", n_rec);
	snprintf(ngets, sizeof(ngets), "%ld", n);
	snprintf(fgo, sizeof(fgo), "%d", go[0]);
	snprintf(fout, sizeof(fout), "%d", out[1]);
	for (int p = 0; p < nproc; p++)
		if ((pid[p] = th_spawn(argv, NULL)) < 0)
			return -1;
	th_sleep_ms(1500);	/* all connected, keys made, waiting */
	if (write(go[1], "gggg", (size_t)nproc) != nproc)
		return -1;
	for (int p = 0; p < nproc; p++) {
		uint64_t ns;
		if (read(out[0], &ns, sizeof(ns)) != sizeof(ns))
			rate = -1;
		else if (rate >= 0)
			rate += (double)n / ((double)ns * 1e-9);
	}
	for (int p = 0; p < nproc; p++)
		if (th_wait_exit(pid[p]) != 0)
			rate = -1;
	close(go[0]), close(go[1]), close(out[0]), close(out[1]);
	return rate;
}

/* Whether BENCH_TYPES lets word run: unset, or it names word, or it
 * names no word of word's group (stores or modes). */
static int chosen(const char *word, const char *const *group, int n)
{
	const char *only = getenv("BENCH_TYPES");
	char padded[256], w[32];
	int named = 0;

	if (!only || !*only)
		return 1;
	snprintf(padded, sizeof(padded), " %s ", only);
	for (int i = 0; i < n; i++) {
		snprintf(w, sizeof(w), " %s ", group[i]);
		named |= strstr(padded, w) != NULL;
	}
	snprintf(w, sizeof(w), " %s ", word);
	return !named || strstr(padded, w) != NULL;
}

static const char *const store_name[] = { "map", "smap" };

static void uh_kind(struct th_heapd *d, uh_heap *h, int mode, int s)
{
	const struct kind *k = &kinds[s];
	uint64_t before = 0, after = 0;
	uh_off m = uh_make_root(h, k, k->name);
	double *r = &result[mode][0][s];

	printf("  %s %s: load %ld ...\n", mode_name[mode], k->name, n_rec);
	fflush(stdout);
	if (status_u64(d, "arena_bytes", &before) != 0)
		fprintf(stderr, "bench_types: no arena_bytes from heapctl\n");
	r[R_LOAD * NSTORES] = uh_load(h, k, m, 0, n_rec);
	if (status_u64(d, "arena_bytes", &after) == 0 && after > before)
		r[R_BYTES * NSTORES] = (double)(after - before) / (double)n_rec;
	r[R_PUT1 * NSTORES] = uh_put_singles(h, k, m);
	r[R_GET * NSTORES] = uh_gets(h, k, m, 0, 0);
	r[R_GETV * NSTORES] = uh_gets(h, k, m, 0, 1);
	r[R_GET100 * NSTORES] = uh_gets(h, k, m, 100, 0);
	r[R_GET1 * NSTORES] = uh_gets(h, k, m, 1, 0);
	r[R_SCAN * NSTORES] = s == S_SMAP ? uh_scans(h, m, 0) : -1;
	r[R_SCANN * NSTORES] = s == S_SMAP ? uh_scans(h, m, 1) : -1;
	if (mode == M_MEMORY && (!getenv("BENCH_TYPES") || strstr(getenv("BENCH_TYPES"), "readers"))) {
		reader_rate[s][0] = readers(d, k, 1);
		reader_rate[s][1] = readers(d, k, 2);
	}
}

static void run_uniheap(int mode)
{
	struct th_heapd d = { 0 };
	char args[128];
	uh_heap *h = NULL;

	snprintf(args, sizeof(args), "--durability %s --size %s --log-size %s", mode_name[mode],
		 HEAP_SIZE, LOG_SIZE);
	if (th_heapd_start(&d, args) != 0 || th_connect(&d, 0, &h) != 0) {
		fprintf(stderr, "bench_types: heapd (%s) did not start\n", args);
		exit(1);
	}
	printf("  heap %s (%s)\n", d.heap, mode_name[mode]);
	for (int s = S_MAP; s <= S_SMAP; s++)
		if (chosen(store_name[s], store_name, 2))
			uh_kind(&d, h, mode, s);
	uh_disconnect(h);
	th_heapd_cleanup(&d);
}

/* --------------------------------------------------------------- LMDB */

struct lm {
	MDB_env *env;
	MDB_dbi dbi;
};

static void lm_open(struct lm *l, const char *dir, unsigned flags)
{
	bench_lmdb_open("bench_types", dir, flags, LMDB_MAPSIZE, &l->env, &l->dbi);
}

static void lm_put(struct lm *l, MDB_txn *txn, long i)
{
	char data[VAL_LEN];
	MDB_val k = { KEY_LEN, keys[i] }, v = { VAL_LEN, data };

	fill_value(i, data);
	must_mdb(mdb_put(txn, l->dbi, &k, &v, 0), "put");
}

/* Records [from, from+n) in txns of per_txn puts; ns per put. */
static double lm_load(struct lm *l, long from, long n, int per_txn)
{
	uint64_t t0 = bench_now_ns();
	MDB_txn *txn;

	for (long i = from; i < from + n;) {
		must_mdb(mdb_txn_begin(l->env, NULL, 0, &txn), "txn_begin");
		for (int j = 0; j < per_txn && i < from + n; j++, i++)
			lm_put(l, txn, i);
		must_mdb(mdb_txn_commit(txn), "txn_commit");
	}
	return (double)(bench_now_ns() - t0) / (double)n;
}

/* per_txn 0: every get in one long read txn; else txns of per_txn gets.
 * copy: each get also copies the value's bytes out. */
static double lm_gets(struct lm *l, int per_txn, int copy)
{
	long n = per_txn == 1 ? n_get / 10 : n_get;
	int each = per_txn ? per_txn : (int)(n > 0x7fffffff ? 0x7fffffff : n);
	uint64_t sum = 0, t0 = bench_now_ns();
	MDB_txn *txn;
	char buf[VAL_LEN];

	for (long i = 0; i < n;) {
		must_mdb(mdb_txn_begin(l->env, NULL, MDB_RDONLY, &txn), "read txn_begin");
		for (int j = 0; j < each && i < n; j++, i++) {
			MDB_val k = { KEY_LEN, keys[rand_rec()] }, v;
			must_mdb(mdb_get(txn, l->dbi, &k, &v), "get");
			sum += v.mv_size + (uintptr_t)v.mv_data;
			if (copy) {
				memcpy(buf, v.mv_data, v.mv_size < VAL_LEN ? v.mv_size : VAL_LEN);
				sum += (unsigned char)buf[v.mv_size / 2 % VAL_LEN];
			}
		}
		mdb_txn_abort(txn);
	}
	if (sum == 0)
		fprintf(stderr, "bench_types: lmdb gets saw nothing\n");
	return (double)(bench_now_ns() - t0) / (double)n;
}

/* Cursor scans inside one read txn, as the sorted map's scans run
 * outside a block. */
static double lm_scans(struct lm *l)
{
	uint64_t sum = 0, t0 = bench_now_ns();
	MDB_txn *txn;
	MDB_cursor *c;

	must_mdb(mdb_txn_begin(l->env, NULL, MDB_RDONLY, &txn), "read txn_begin");
	must_mdb(mdb_cursor_open(txn, l->dbi, &c), "cursor_open");
	for (long i = 0; i < n_scan; i++) {
		MDB_val k = { KEY_LEN, keys[rand_rec()] }, v;
		int rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
		for (int j = 0; j < SCAN_LEN && rc == 0; j++) {
			sum += k.mv_size + v.mv_size;
			rc = j + 1 < SCAN_LEN ? mdb_cursor_get(c, &k, &v, MDB_NEXT) : 0;
		}
		if (rc != 0 && rc != MDB_NOTFOUND)
			must_mdb(rc, "cursor_get");
	}
	mdb_cursor_close(c);
	mdb_txn_abort(txn);
	if (sum == 0)
		fprintf(stderr, "bench_types: lmdb scans saw nothing\n");
	return (double)(bench_now_ns() - t0) / (double)n_scan;
}

static double lm_bytes(struct lm *l)
{
	MDB_envinfo info;
	MDB_stat st;

	must_mdb(mdb_env_info(l->env, &info), "env_info");
	must_mdb(mdb_env_stat(l->env, &st), "env_stat");
	return (double)(info.me_last_pgno + 1) * st.ms_psize / (double)n_rec;
}

static void run_lmdb(int mode)
{
	unsigned flags = mode == M_MEMORY ? MDB_NOSYNC | MDB_NOMETASYNC | MDB_WRITEMAP : 0;
	double *r = &result[mode][0][S_LMDB];
	char dir[512];
	struct lm l;

	bench_lmdb_dir("bench_types", dir, sizeof(dir));
	printf("  lmdb %s (%s): load %ld ...\n", dir,
	       mode == M_MEMORY ? "NOSYNC|NOMETASYNC|WRITEMAP" : "default flags", n_rec);
	fflush(stdout);
	lm_open(&l, dir, flags);
	r[R_LOAD * NSTORES] = lm_load(&l, 0, n_rec, BATCH);
	r[R_BYTES * NSTORES] = lm_bytes(&l);
	r[R_PUT1 * NSTORES] = lm_load(&l, n_rec, n_one, 1);
	r[R_GET * NSTORES] = lm_gets(&l, 0, 0);
	r[R_GETV * NSTORES] = lm_gets(&l, 0, 1);
	r[R_GET100 * NSTORES] = lm_gets(&l, 100, 0);
	r[R_GET1 * NSTORES] = lm_gets(&l, 1, 0);
	r[R_SCAN * NSTORES] = lm_scans(&l);
	r[R_SCANN * NSTORES] = lm_scans(&l);	/* no batch call: the cursor again */
	mdb_env_close(l.env);
	bench_lmdb_remove(dir);
}

/* -------------------------------------------------------------- sizing */

static void set_counts(long n)
{
	n_rec = n < 1000 ? 1000 : n;
	n_one = bench_scaled(20000, scale);
	if (n_one > n_rec)
		n_one = n_rec;
	n_get = bench_scaled(1000000, scale);
	n_scan = bench_scaled(100000, scale);
}

/* Seconds the whole run takes per record, from a small load in memory
 * mode (hash map, sorted map, LMDB) times a measured factor. */
static double calibrate(void)
{
	const long c = 20000;
	struct th_heapd d = { 0 };
	uh_heap *h = NULL;
	double ns = 0;
	char dir[512];
	struct lm l;

	set_counts(c);
	make_keys();
	if (th_heapd_start(&d, "--durability memory --size 256M --log-size " LOG_SIZE) != 0 ||
	    th_connect(&d, 0, &h) != 0) {
		fprintf(stderr, "bench_types: heapd did not start\n");
		exit(1);
	}
	for (int s = 0; s < 2; s++)
		ns += uh_load(h, &kinds[s], uh_make_root(h, &kinds[s], kinds[s].name), 0, c);
	uh_disconnect(h);
	th_heapd_cleanup(&d);
	bench_lmdb_dir("bench_types", dir, sizeof(dir));
	lm_open(&l, dir, MDB_NOSYNC | MDB_NOMETASYNC | MDB_WRITEMAP);
	ns += lm_load(&l, 0, c, BATCH);
	mdb_env_close(l.env);
	bench_lmdb_remove(dir);
	free(keys);
	/* A 1M load runs about 2x slower per record than a 20k one (caches,
	 * deeper trees); gets, scans, samples and the sync pass make the
	 * whole run about 4.5x the loads (measured on a 2-vCPU VM). */
	return ns * 1e-9 * 2.0 * 4.5;
}

static void print_table(void)
{
	printf("\nbench_types: N = %ld records, keys %d B, values %d B; heap and LMDB on tmpfs; "
	       "ratio = uniheap / LMDB\n", n_rec, KEY_LEN, VAL_LEN);
	for (int m = 0; m < NMODES; m++) {
		printf("\n%-32s %10s %10s %10s %9s %9s\n",
		       m == M_MEMORY ? "memory (LMDB NOSYNC|WRITEMAP)" : "sync (LMDB default flags)",
		       "map", "smap", "lmdb", "map/lmdb", "smap/lmdb");
		for (int r = 0; r < NROWS; r++) {
			const double *v = result[m][r];
			printf("%-32s", row_name[r]);
			for (int s = 0; s < NSTORES; s++) {
				if (v[s] < 0)
					printf(" %10s", "-");
				else
					printf(" %7.0f %-2s", v[s], row_unit[r]);
			}
			for (int s = 0; s < 2; s++) {
				if (v[s] < 0 || v[S_LMDB] <= 0)
					printf(" %9s", "-");
				else
					printf(" %8.2fx", v[s] / v[S_LMDB]);
			}
			putchar('\n');
		}
	}
	printf("\nreaders (memory, no block): gets/s of 1 process, of 2 at once, ratio\n");
	for (int s = 0; s < 2; s++)
		if (reader_rate[s][0] > 0)
			printf("%-32s %10.0f %10.0f %8.2fx\n", kinds[s].name, reader_rate[s][0],
		       reader_rate[s][1], reader_rate[s][1] / reader_rate[s][0]);
}

int main(int argc, char **argv)
{
	const char *b = getenv("BENCH_BUDGET_S");
	double budget = b && atof(b) > 0 ? atof(b) : 170.0, per_rec;
	long n;

	self = argv[0];
	if (argc == 8 && !strcmp(argv[1], "--reader"))
		return reader_main(argv);
	scale = bench_scale_env();
	n = bench_scaled(1000000, scale);
	printf("bench_types: %s, scale %.2f, budget %.0f s\n", uh_version(), scale, budget);
	fflush(stdout);
	per_rec = calibrate();
	printf("  calibration: a run with N = %ld projected at %.0f s\n", n, per_rec * (double)n);
	if (per_rec * (double)n > budget) {
		long fit = (long)(budget / per_rec);
		printf("  projected %.0f s for N = %ld; N shrunk to %ld\n", per_rec * (double)n, n,
		       fit);
		n = fit;
	}
	set_counts(n);
	make_keys();
	for (size_t i = 0; i < sizeof(result) / sizeof(result[0][0][0]); i++)
		(&result[0][0][0])[i] = -1;
	for (int m = 0; m < NMODES; m++) {
		uint64_t t0 = bench_now_ns();
		if (!chosen(mode_name[m], mode_name, NMODES))
			continue;
		printf("mode %s, N = %ld ...\n", mode_name[m], n_rec);
		fflush(stdout);
		run_uniheap(m);
		run_lmdb(m);
		printf("  mode %s took %.1f s\n", mode_name[m], (double)(bench_now_ns() - t0) * 1e-9);
	}
	print_table();
	free(keys);
	return 0;
}
