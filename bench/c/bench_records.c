/*
 * bench_records.c -- YCSB's record operations at the C level, uniheap
 * against LMDB (liblmdb) in the same run: what a binding's insert, read
 * and scan of a YCSB record cost below the language. One process, one
 * thread; the heap (a private heapd, durability memory) and the LMDB
 * environment (MDB_NOSYNC|MDB_NOMETASYNC|MDB_WRITEMAP: both survive a
 * process crash, not a power loss) on tmpfs. Never a test.
 *
 * A record is YCSB's: ten fields field0..field9 of 100 bytes under a key
 * "user" + 19 digits, the number an FNV-1a hash of the record index, so
 * keys arrive in random order. uniheap keeps it as one object of a class
 * of ten inline bytes fields (capacity 100) in a sorted map; LMDB as one
 * value of the ten fields encoded as bench/ycsb does (per field a u16
 * name length, the name, a u32 value length, the value), 1,120 bytes.
 *
 * Rows, ns per operation:
 *   insert   one record per block / write transaction, committed
 *            (uh_smap_put_record; mdb_put in its own txn), as a YCSB load
 *   read     a random key's whole record copied out, every field's bytes
 *            read (uh_smap_get_record; a read txn, mdb_get and a copy)
 *   scan     50 records from a random key, each copied out
 *            (uh_smap_next_records; a read txn and a cursor)
 * and the ratio uniheap / LMDB (time: below 1 is uniheap ahead).
 *
 * N = 100,000 records; BENCH_SCALE=<f> scales N and every sample count.
 */
#include <errno.h>
#include <lmdb.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_lmdb.h"
#include "bench_util.h"
#include "harness.h"

#define FIELDS 10
#define FIELD_LEN 100
#define KEY_LEN BENCH_KEY_LEN
#define SCAN_LEN 50
#define ENC_LEN (FIELDS * (2 + 6 + 4 + FIELD_LEN))	/* names "fieldN": 6 bytes */
#define LMDB_MAPSIZE (4ull << 30)

static const char *prog = "bench_records";
static long n_rec, n_read, n_scan;
static char (*keys)[KEY_LEN + 1];

static void must(int rc, const char *what)
{
	bench_must(prog, rc, what);
}

static void must_mdb(int rc, const char *what)
{
	bench_mdb_must(prog, rc, what);
}

/* Printable bytes the field values are cut from (made before the clock
 * starts: generating 1,000 bytes a record would cost more than storing
 * them). */
static unsigned char pool[1 << 16];

static void pool_fill(void)
{
	uint64_t s = 0x2545f4914f6cdd1dull;

	for (size_t j = 0; j < sizeof(pool); j++)	/* bound: sizeof(pool) */
		pool[j] = (unsigned char)(' ' + th_xorshift64(&s) % 95);
}

/* Field f of record i: 100 bytes of the pool at a place both choose. */
static const unsigned char *field_value(long i, int f)
{
	return pool + bench_fnv64((uint64_t)i * FIELDS + (uint64_t)f) % (sizeof(pool) - FIELD_LEN);
}

static uint64_t rand_state = 0x9e3779b97f4a7c15ull;

static long rand_rec(void)
{
	return (long)(th_xorshift64(&rand_state) % (uint64_t)n_rec);
}

static uh_key str_key(const char *k)
{
	uh_key key = { .kind = UH_KEY_STRING, .data = k, .len = KEY_LEN };
	return key;
}

/* Sum of one byte of each field of the copy at p laid out as fields at
 * at[f]: every field is read, as a binding hands each one on. */
static uint64_t touch(const unsigned char *p, const uint32_t *at)
{
	uint64_t sum = 0;

	for (int f = 0; f < FIELDS; f++)	/* bound: FIELDS */
		sum += p[at[f] + FIELD_LEN / 2];
	return sum;
}

/* ---------------------------------------------------------- uniheap */

struct uh_side {
	uh_heap *h;
	uh_off m;
	uint32_t cls;
	uint32_t at[FIELDS];	/* where field f's bytes lie in a record's payload */
};

static void uh_setup(struct uh_side *u)
{
	uh_field_spec spec[FIELDS];
	static char names[FIELDS][8];

	for (int f = 0; f < FIELDS; f++) {	/* bound: FIELDS */
		snprintf(names[f], sizeof(names[f]), "field%d", f);
		spec[f] = (uh_field_spec){ names[f], UH_T_IBYTES, FIELD_LEN };
	}
	must(uh_class_register(u->h, "bench.Record", spec, FIELDS, &u->cls), "class_register");
	must(uh_smap_new(u->h, UH_KEY_STRING, &u->m), "smap_new");
	must(uh_root_set(u->h, "bench.records", u->m), "root_set");
	/* An inline field is its u32 length, then its bytes (FORMAT.md 3.3),
	 * at 4-aligned offsets in declaration order after the header. */
	for (int f = 0; f < FIELDS; f++)	/* bound: FIELDS */
		u->at[f] = (uint32_t)f * (4 + FIELD_LEN) + 4;
}

static double uh_inserts(struct uh_side *u)
{
	uh_inline_value iv[FIELDS];
	uint64_t t0 = bench_now_ns();

	for (long i = 0; i < n_rec; i++) {
		for (int f = 0; f < FIELDS; f++)	/* bound: FIELDS */
			iv[f] = (uh_inline_value){ .field = (uint32_t)f, .len = FIELD_LEN,
						   .data = field_value(i, f) };
		uh_key k = str_key(keys[i]);
		must(uh_smap_put_record(u->h, u->m, &k, u->cls, iv, FIELDS, 0), "put_record");
	}
	return (double)(bench_now_ns() - t0) / (double)n_rec;
}

static double uh_reads(struct uh_side *u)
{
	static unsigned char buf[4096];
	uint64_t sum = 0, t0 = bench_now_ns();

	for (long i = 0; i < n_read; i++) {
		uh_key k = str_key(keys[rand_rec()]);
		size_t len;
		uint32_t cls;
		must(uh_smap_get_record(u->h, u->m, &k, buf, sizeof(buf), &len, &cls), "get_record");
		sum += touch(buf, u->at);
	}
	if (!sum)
		fprintf(stderr, "%s: every field was empty\n", prog);
	return (double)(bench_now_ns() - t0) / (double)n_read;
}

static double uh_scans(struct uh_side *u)
{
	static unsigned char buf[64 * 1024];
	uh_scan_record recs[SCAN_LEN];
	uint64_t sum = 0, t0 = bench_now_ns();

	for (long i = 0; i < n_scan; i++) {
		uh_key from = str_key(keys[rand_rec()]);
		uh_iter it;
		uint32_t got = 0;
		must(uh_smap_scan(u->h, u->m, &from, 0, &it), "smap_scan");
		for (uint32_t seen = 0; seen < SCAN_LEN; seen += got) {	/* bound: SCAN_LEN */
			int rc = uh_smap_next_records(u->h, u->m, &it, NULL, 0, buf, sizeof(buf),
						      recs, SCAN_LEN - seen, &got);
			if (rc == UH_ENOTFOUND)
				break;
			must(rc, "next_records");
			for (uint32_t r = 0; r < got; r++)	/* bound: SCAN_LEN */
				sum += touch(buf + recs[r].at, u->at);
		}
	}
	if (!sum)
		fprintf(stderr, "%s: every field was empty\n", prog);
	return (double)(bench_now_ns() - t0) / (double)n_scan;
}

static void run_uniheap(double *r)
{
	struct th_heapd d = { 0 };
	struct uh_side u = { 0 };

	if (th_heapd_start(&d, "--durability memory --size 2G") != 0 ||
	    th_connect(&d, 0, &u.h) != 0) {
		th_heapd_cleanup(&d);
		exit(1);
	}
	uh_setup(&u);
	r[0] = uh_inserts(&u);
	r[1] = uh_reads(&u);
	r[2] = uh_scans(&u);
	uh_disconnect(u.h);
	th_heapd_cleanup(&d);
}

/* ------------------------------------------------------------- LMDB */

/* Record i encoded as bench/ycsb encodes one; returns its length. */
static size_t encode(long i, unsigned char *out)
{
	size_t at = 0;

	for (int f = 0; f < FIELDS; f++) {	/* bound: FIELDS */
		uint16_t nl = 6;
		uint32_t vl = FIELD_LEN;
		memcpy(out + at, &nl, 2);
		snprintf((char *)out + at + 2, 7, "field%d", f);
		memcpy(out + at + 8, &vl, 4);
		memcpy(out + at + 12, field_value(i, f), FIELD_LEN);
		at += 12 + FIELD_LEN;
	}
	return at;
}

static const uint32_t enc_at[FIELDS] = { 12, 124, 236, 348, 460, 572, 684, 796, 908, 1020 };

static double lm_inserts(MDB_env *env, MDB_dbi dbi)
{
	unsigned char v[ENC_LEN];
	uint64_t t0 = bench_now_ns();

	for (long i = 0; i < n_rec; i++) {
		MDB_txn *txn;
		MDB_val key = { KEY_LEN, keys[i] }, val = { encode(i, v), v };
		must_mdb(mdb_txn_begin(env, NULL, 0, &txn), "txn_begin");
		must_mdb(mdb_put(txn, dbi, &key, &val, 0), "put");
		must_mdb(mdb_txn_commit(txn), "commit");
	}
	return (double)(bench_now_ns() - t0) / (double)n_rec;
}

static double lm_reads(MDB_env *env, MDB_dbi dbi)
{
	static unsigned char buf[ENC_LEN];
	uint64_t sum = 0, t0 = bench_now_ns();

	for (long i = 0; i < n_read; i++) {
		MDB_txn *txn;
		MDB_val key = { KEY_LEN, keys[rand_rec()] }, val;
		must_mdb(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), "txn_begin");
		must_mdb(mdb_get(txn, dbi, &key, &val), "get");
		memcpy(buf, val.mv_data, val.mv_size < ENC_LEN ? val.mv_size : ENC_LEN);
		mdb_txn_abort(txn);
		sum += touch(buf, enc_at);
	}
	if (!sum)
		fprintf(stderr, "%s: every field was empty\n", prog);
	return (double)(bench_now_ns() - t0) / (double)n_read;
}

static double lm_scans(MDB_env *env, MDB_dbi dbi)
{
	static unsigned char buf[SCAN_LEN][ENC_LEN];
	uint64_t sum = 0, t0 = bench_now_ns();

	for (long i = 0; i < n_scan; i++) {
		MDB_txn *txn;
		MDB_cursor *c;
		MDB_val key = { KEY_LEN, keys[rand_rec()] }, val;
		must_mdb(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), "txn_begin");
		must_mdb(mdb_cursor_open(txn, dbi, &c), "cursor_open");
		int rc = mdb_cursor_get(c, &key, &val, MDB_SET_RANGE);
		for (int r = 0; rc == 0 && r < SCAN_LEN; r++) {	/* bound: SCAN_LEN */
			memcpy(buf[r], val.mv_data, val.mv_size < ENC_LEN ? val.mv_size : ENC_LEN);
			sum += touch(buf[r], enc_at);
			rc = mdb_cursor_get(c, &key, &val, MDB_NEXT);
		}
		if (rc && rc != MDB_NOTFOUND)
			must_mdb(rc, "cursor_get");
		mdb_cursor_close(c);
		mdb_txn_abort(txn);
	}
	if (!sum)
		fprintf(stderr, "%s: every field was empty\n", prog);
	return (double)(bench_now_ns() - t0) / (double)n_scan;
}

static void run_lmdb(double *r)
{
	char dir[512];
	MDB_env *env;
	MDB_dbi dbi;

	bench_lmdb_dir(prog, dir, sizeof(dir));
	bench_lmdb_open(prog, dir, MDB_NOSYNC | MDB_NOMETASYNC | MDB_WRITEMAP, LMDB_MAPSIZE, &env,
			&dbi);
	r[0] = lm_inserts(env, dbi);
	r[1] = lm_reads(env, dbi);
	r[2] = lm_scans(env, dbi);
	mdb_env_close(env);
	bench_lmdb_remove(dir);
}

int main(void)
{
	static const char *rows[3] = { "insert, 1 per block/txn", "read a record + copy",
				       "scan 50 records + copy" };
	double scale = bench_scale_env(), u[3], l[3];

	n_rec = bench_scaled(100000, scale);
	n_read = bench_scaled(200000, scale);
	n_scan = bench_scaled(10000, scale);
	pool_fill();
	keys = malloc((size_t)n_rec * sizeof(*keys));
	if (!keys) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return 1;
	}
	for (long i = 0; i < n_rec; i++)
		bench_ycsb_key((uint64_t)i, keys[i]);
	run_uniheap(u);
	run_lmdb(l);
	printf("bench_records: N = %ld records of %d x %d B, keys %d B; heap and LMDB on tmpfs;\n"
	       "uniheap durability memory, LMDB NOSYNC|NOMETASYNC|WRITEMAP; ratio = uniheap / LMDB time\n\n",
	       n_rec, FIELDS, FIELD_LEN, KEY_LEN);
	printf("%-28s %10s %10s %8s\n", "", "uniheap", "lmdb", "ratio");
	for (int i = 0; i < 3; i++)	/* bound: 3 rows */
		printf("%-28s %7.0f ns %7.0f ns %7.2fx\n", rows[i], u[i], l[i], u[i] / l[i]);
	free(keys);
	return 0;
}
