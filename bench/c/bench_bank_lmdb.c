/*
 * bench_bank_lmdb.c -- the LMDB side of bench_bank: the same bank as the
 * uniheap side (N accounts, i64 balances; a transfer reads two balances
 * and writes both in one transaction), in one LMDB environment that every
 * worker process opens itself (an MDB_env must not cross fork()).
 *
 * Key: the account number as an unsigned int (MDB_INTEGERKEY); value: the
 * balance, 8 bytes. A transfer is mdb_txn_begin (write; takes the
 * environment's single writer lock, so K processes are serialized by it),
 * get, get, put, put, mdb_txn_commit.
 *
 * Durability follows the env flags the caller passes: 0 is LMDB's default
 * (data pages fdatasync'd, then the meta page, at every commit: survives
 * power loss); MDB_NOSYNC|MDB_NOMETASYNC|MDB_WRITEMAP syncs nothing at
 * commit (survives a process crash, not power loss).
 *
 * No header: bench_bank.c declares these four functions itself (one
 * program, two files). Every function prints its own error and returns -1.
 */
#include <errno.h>
#include <lmdb.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BANK_MAPSIZE (64u << 20)	/* copy-on-write pages of 1000 tiny rows fit many times */

static int lmdb_fail(const char *what, int rc)
{
	fprintf(stderr, "bench_bank: lmdb %s: %s\n", what, mdb_strerror(rc));
	return -1;
}

/* Open the environment in dir (made if missing) with flags. On failure
 * nothing is left open. */
static int bank_env_open(const char *dir, unsigned flags, MDB_env **env)
{
	int rc;

	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		fprintf(stderr, "bench_bank: mkdir %s: %s\n", dir, strerror(errno));
		return -1;
	}
	rc = mdb_env_create(env);
	if (rc)
		return lmdb_fail("env_create", rc);
	rc = mdb_env_set_mapsize(*env, BANK_MAPSIZE);
	if (!rc)
		rc = mdb_env_open(*env, dir, flags, 0600);
	if (rc) {
		mdb_env_close(*env);	/* owed after a failed open too */
		return lmdb_fail("env_open", rc);
	}
	return 0;
}

static int bank_dbi(MDB_txn *txn, unsigned flags, MDB_dbi *dbi)
{
	int rc = mdb_dbi_open(txn, NULL, flags | MDB_INTEGERKEY, dbi);

	return rc ? lmdb_fail("dbi_open", rc) : 0;
}

/* Create the environment in dir with n accounts of balance initial each,
 * in one transaction, synced before it is closed. */
int lmdb_bank_setup(const char *dir, unsigned flags, uint32_t n, int64_t initial)
{
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	int rc;

	if (bank_env_open(dir, flags, &env) != 0)
		return -1;
	rc = mdb_txn_begin(env, NULL, 0, &txn);
	if (rc) {
		mdb_env_close(env);
		return lmdb_fail("txn_begin", rc);
	}
	if (bank_dbi(txn, MDB_CREATE, &dbi) != 0)
		goto fail;
	for (unsigned int k = 0; k < n; k++) {
		MDB_val key = { sizeof(k), &k }, val = { sizeof(initial), &initial };

		rc = mdb_put(txn, dbi, &key, &val, 0);
		if (rc) {
			lmdb_fail("put", rc);
			goto fail;
		}
	}
	rc = mdb_txn_commit(txn);
	if (!rc)
		rc = mdb_env_sync(env, 1);
	mdb_env_close(env);
	return rc ? lmdb_fail("commit setup", rc) : 0;
fail:
	mdb_txn_abort(txn);
	mdb_env_close(env);
	return -1;
}

/* Sum of all balances, in one read transaction. */
int lmdb_bank_total(const char *dir, unsigned flags, uint32_t n, int64_t *total)
{
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	int rc = 0;

	if (bank_env_open(dir, flags, &env) != 0)
		return -1;
	rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
	if (rc) {
		mdb_env_close(env);
		return lmdb_fail("txn_begin read", rc);
	}
	*total = 0;
	if (bank_dbi(txn, 0, &dbi) != 0)
		rc = -1;
	for (unsigned int k = 0; rc == 0 && k < n; k++) {
		MDB_val key = { sizeof(k), &k }, val;
		int64_t v;

		rc = mdb_get(txn, dbi, &key, &val);
		if (rc || val.mv_size != sizeof(v)) {
			rc = lmdb_fail("get (total)", rc ? rc : MDB_CORRUPTED);
			break;
		}
		memcpy(&v, val.mv_data, sizeof(v));
		*total += v;
	}
	mdb_txn_abort(txn);
	mdb_env_close(env);
	return rc ? -1 : 0;
}

/* Read balance k inside txn. The value points into the map: copied out
 * at once, since the put that follows may move it. */
static int get_balance(MDB_txn *txn, MDB_dbi dbi, unsigned int k, int64_t *v)
{
	MDB_val key = { sizeof(k), &k }, val;
	int rc = mdb_get(txn, dbi, &key, &val);

	if (rc)
		return rc;
	if (val.mv_size != sizeof(*v))
		return MDB_CORRUPTED;
	memcpy(v, val.mv_data, sizeof(*v));
	return 0;
}

static int put_balance(MDB_txn *txn, MDB_dbi dbi, unsigned int k, int64_t v)
{
	MDB_val key = { sizeof(k), &k }, val = { sizeof(v), &v };

	return mdb_put(txn, dbi, &key, &val, 0);
}

/* One transfer of amount from a to b: begin, get, get, put, put, commit. */
static int transfer(MDB_env *env, MDB_dbi dbi, uint32_t a, uint32_t b, int64_t amount)
{
	MDB_txn *txn;
	int64_t va, vb;
	int rc = mdb_txn_begin(env, NULL, 0, &txn);

	if (rc)
		return rc;
	rc = get_balance(txn, dbi, a, &va);
	if (!rc)
		rc = get_balance(txn, dbi, b, &vb);
	if (!rc)
		rc = put_balance(txn, dbi, a, va - amount);
	if (!rc)
		rc = put_balance(txn, dbi, b, vb + amount);
	if (rc) {
		mdb_txn_abort(txn);
		return rc;
	}
	return mdb_txn_commit(txn);
}

/*
 * A worker process's whole life on LMDB: open the environment, say ready
 * (one byte on ready_fd), wait for the start (EOF on start_fd), do nops
 * transfers with pairs from pick(ctx, ...), close. Env open and dbi
 * lookup happen before "ready", so the timed part is the transfers (and
 * the close).
 */
int lmdb_bank_worker(const char *dir, unsigned flags, long nops,
		     void (*pick)(void *ctx, uint32_t *a, uint32_t *b, int64_t *amount),
		     void *ctx, int ready_fd, int start_fd)
{
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	char c = 'r';
	int rc;

	if (bank_env_open(dir, flags, &env) != 0)
		return -1;
	rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
	if (!rc) {
		rc = bank_dbi(txn, 0, &dbi) ? EIO : 0;
		mdb_txn_abort(txn);	/* the dbi handle outlives its read txn */
	}
	if (rc || write(ready_fd, &c, 1) != 1 || read(start_fd, &c, 1) != 0) {
		mdb_env_close(env);
		fprintf(stderr, "bench_bank: lmdb worker could not get ready\n");
		return -1;
	}
	for (long i = 0; i < nops; i++) {
		uint32_t a, b;
		int64_t amount;

		pick(ctx, &a, &b, &amount);
		rc = transfer(env, dbi, a, b, amount);
		if (rc) {
			mdb_env_close(env);
			return lmdb_fail("transfer", rc);
		}
	}
	mdb_env_close(env);
	return 0;
}
