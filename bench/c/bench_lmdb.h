/*
 * bench_lmdb.h -- the LMDB side the benchmarks that measure uniheap
 * against LMDB share: an environment in a fresh directory next to where
 * the harness puts heaps (tmpfs), opened with the flags of the durability
 * class compared, and removed afterwards; and YCSB's key for record i.
 * Every failure ends the program (a number measured after one is noise).
 */
#ifndef BENCH_LMDB_H
#define BENCH_LMDB_H

#include <errno.h>
#include <lmdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BENCH_KEY_LEN 23	/* "user" + 19 digits */

static inline void bench_mdb_must(const char *prog, int rc, const char *what)
{
	if (rc != 0) {
		fprintf(stderr, "%s: lmdb %s: %s\n", prog, what, mdb_strerror(rc));
		exit(1);
	}
}

/* FNV-1a over the index's 8 bytes: a fixed scramble, as YCSB hashes its
 * record numbers, so keys arrive in no particular order. */
static inline uint64_t bench_fnv64(uint64_t x)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (int i = 0; i < 8; i++, x >>= 8) {	/* bound: 8 */
		h ^= x & 0xff;
		h *= 0x100000001b3ull;
	}
	return h;
}

/* YCSB's key of record i: "user" and 19 digits of its scrambled number. */
static inline void bench_ycsb_key(uint64_t i, char out[BENCH_KEY_LEN + 1])
{
	snprintf(out, BENCH_KEY_LEN + 1, "user%019llu",
		 (unsigned long long)(bench_fnv64(i) % 10000000000000000000ull));
}

/* An empty directory for an environment: under $TMPDIR, else /dev/shm,
 * else /tmp. */
static inline void bench_lmdb_dir(const char *prog, char *dir, size_t len)
{
	const char *t = getenv("TMPDIR");
	const char *base = t && *t ? t : "/dev/shm";

	snprintf(dir, len, "%s/uniheap-lmdb-XXXXXX", base);
	if (!mkdtemp(dir)) {
		snprintf(dir, len, "/tmp/uniheap-lmdb-XXXXXX");
		if (!mkdtemp(dir)) {
			fprintf(stderr, "%s: mkdtemp: %s\n", prog, strerror(errno));
			exit(1);
		}
	}
}

/* The environment in dir with flags and a map of mapsize bytes, and its
 * main database. */
static inline void bench_lmdb_open(const char *prog, const char *dir, unsigned flags,
				   size_t mapsize, MDB_env **env, MDB_dbi *dbi)
{
	MDB_txn *txn;

	bench_mdb_must(prog, mdb_env_create(env), "env_create");
	bench_mdb_must(prog, mdb_env_set_mapsize(*env, mapsize), "set_mapsize");
	bench_mdb_must(prog, mdb_env_open(*env, dir, flags, 0600), "env_open");
	bench_mdb_must(prog, mdb_txn_begin(*env, NULL, 0, &txn), "txn_begin");
	bench_mdb_must(prog, mdb_dbi_open(txn, NULL, 0, dbi), "dbi_open");
	bench_mdb_must(prog, mdb_txn_commit(txn), "txn_commit");
}

/* The environment's files and dir, once it is closed. */
static inline void bench_lmdb_remove(const char *dir)
{
	char p[600];

	snprintf(p, sizeof(p), "%s/data.mdb", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/lock.mdb", dir);
	unlink(p);
	rmdir(dir);
}

#endif /* BENCH_LMDB_H */
