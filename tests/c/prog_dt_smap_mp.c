/*
 * prog_dt_smap_mp.c -- one writer of test_dt_smap_mp: random puts and
 * removes of its own keys "w<id>-<num>" in the shared sorted map
 * "smap.mp", and every few operations a scan of the whole map:
 *   - outside a block (each uh_smap_next its own block): keys strictly
 *     ascending (descending for reverse scans), every value matching its
 *     key (value = num << 32 | id << 24 | seq: no torn entry), and this
 *     writer's own keys exactly as it last wrote them (nobody else
 *     touches them);
 *   - inside a block: the number of entries equals uh_smap_len (one
 *     snapshot).
 * Writes its final keys and values to outfile ("num value" lines).
 *
 * usage: prog_dt_smap_mp <socket> <id> <ops> <seed> <outfile>
 * exit 0 ok, 1 check failed, 2 setup failed
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "uhint.h"

enum { RANGE = 700 };

static uh_heap *h;
static uh_off m;
static int id;
static int64_t mine[RANGE];	/* 0 = absent */
static uint64_t rng;
static int lost;	/* scans that lost their place (UH_ESTATE) */

static uint64_t rnd(void)
{
	return th_xorshift64(&rng);
}

static int fail(const char *what)
{
	fprintf(stderr, "prog_dt_smap_mp %d: %s (%s)\n", id, what, uh_errmsg());
	return 1;
}

static void make_key(int num, char *buf, uh_key *k)
{
	memset(k, 0, sizeof(*k));
	k->kind = UH_KEY_STRING;
	/* Writers 1 and 2 use keys longer than the 16 bytes an iterator
	 * copies, so scans re-validate key objects to go on. */
	k->len = (size_t)snprintf(buf, 48, id ? "w%d-%06d-a-longer-key-tail" : "w%d-%06d", id, num);
	k->data = buf;
}

/* The key a scan returned, copied; 0 if another session removed it after
 * the scan read it (its object changed since the iterator's snapshot, kept
 * in s[3]: then the bytes may be reused and prove nothing). */
static int copy_key(const uh_key *k, const uh_iter *it, char *buf, size_t *len)
{
	const struct uh_objhdr *o = (const void *)((const char *)k->data - UH_OBJHDR_SIZE);
	if (k->len >= 64)
		return -1;
	memcpy(buf, k->data, k->len);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	uint64_t w = __atomic_load_n(&o->lock, __ATOMIC_ACQUIRE);
	*len = k->len;
	buf[k->len] = '\0';
	return !uh_lock_is_locked(w) && w <= it->s[3];
}

static int scan_outside(void)
{
	int rev = rnd() % 2, rc, nmine = 0, have_prev = 0;
	char prev[64], cur[64];
	size_t plen = 0, clen;
	uh_iter it;
	uh_key k;
	uh_value v;

	if (uh_smap_scan(h, m, NULL, rev ? UH_SCAN_REVERSE : 0, &it) != 0)
		return fail("scan");
	while ((rc = uh_smap_next(h, m, &it, &k, &v)) == 0) {
		int ok = copy_key(&k, &it, cur, &clen);
		if (ok < 0)
			return fail("scan returned an over-long key");
		if (!ok)
			continue;
		if (have_prev) {
			size_t n = plen < clen ? plen : clen;
			int c = memcmp(prev, cur, n);
			if (c == 0)
				c = (plen > clen) - (plen < clen);
			if (rev ? c <= 0 : c >= 0) {
				fprintf(stderr, "order: '%s' then '%s' (rev %d)\n", prev, cur, rev);
				return fail("scan out of order");
			}
		}
		int wid, num;
		if (sscanf(cur, "w%d-%d", &wid, &num) != 2 || num < 0 || num >= RANGE ||
		    v.type != UH_T_I64 || (v.u.i >> 32) != num || ((v.u.i >> 24) & 0xff) != wid) {
			fprintf(stderr, "torn: key '%s' value %llx\n", cur, (unsigned long long)v.u.i);
			return fail("torn entry");
		}
		if (wid == id) {
			if (mine[num] != v.u.i)
				return fail("own key with a value it never had last");
			nmine++;
		}
		memcpy(prev, cur, clen + 1);
		plen = clen;
		have_prev = 1;
	}
	if (rc == UH_ESTATE) {
		/* Documented: the long key returned last and the one after it
		 * were both removed since; the scan cannot go on. */
		lost++;
		return 0;
	}
	if (rc != UH_ENOTFOUND)
		return fail("scan next");
	int want = 0;
	for (int i = 0; i < RANGE; i++)
		want += mine[i] != 0;
	if (want != nmine) {
		fprintf(stderr, "own keys: scan saw %d, wrote %d\n", nmine, want);
		return fail("scan missed own keys");
	}
	return 0;
}

struct count { uint64_t n, len; };

static int count_block(uh_heap *hh, void *arg)
{
	struct count *c = arg;
	uh_iter it;
	int rc;

	c->n = 0;
	if ((rc = uh_smap_len(hh, m, &c->len)) != 0 || (rc = uh_smap_scan(hh, m, NULL, 0, &it)) != 0)
		return rc;
	while ((rc = uh_smap_next(hh, m, &it, NULL, NULL)) == 0)
		c->n++;
	return rc == UH_ENOTFOUND ? 0 : rc;
}

static int scan_inside(void)
{
	struct count c;
	if (uh_run(h, count_block, &c, 1000) != 0)
		return fail("block scan");
	if (c.n != c.len) {
		fprintf(stderr, "block scan: %llu entries, len %llu\n", (unsigned long long)c.n,
			(unsigned long long)c.len);
		return fail("block scan disagrees with len");
	}
	return 0;
}

static int one_op(uint32_t seq)
{
	char buf[48];
	uh_key k;
	int num = (int)(rnd() % RANGE), r = (int)(rnd() % 100), rc;

	make_key(num, buf, &k);
	if (r < 55) {
		uh_value v = { .type = UH_T_I64 };
		v.u.i = (int64_t)num << 32 | (int64_t)id << 24 | (seq & 0xffffff);
		if (uh_smap_put(h, m, &k, &v, 0) != 0)
			return fail("put");
		mine[num] = v.u.i;
		return 0;
	}
	if (r < 92) {
		uh_value old;
		rc = uh_smap_remove(h, m, &k, &old, 0);
		if (rc == 0 && old.u.i != mine[num])
			return fail("remove returned a wrong value");
		if (rc != 0 && !(rc == UH_ENOTFOUND && mine[num] == 0))
			return fail("remove");
		mine[num] = 0;
		return 0;
	}
	return r < 98 ? scan_outside() : scan_inside();
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: prog_dt_smap_mp <socket> <id> <ops> <seed> <outfile>\n");
		return 2;
	}
	id = atoi(argv[2]);
	long ops = atol(argv[3]);
	rng = strtoull(argv[4], NULL, 0) * 7919 + (uint64_t)id * 104729 + 1;
	if (uh_connect(argv[1], 0, &h) != 0 || uh_root_get(h, "smap.mp", &m) != 0)
		return fail("setup") + 1;
	for (long i = 0; i < ops; i++)
		if (one_op((uint32_t)i + 1) != 0)
			return 1;
	if (scan_outside() != 0 || scan_inside() != 0)
		return 1;
	FILE *f = fopen(argv[5], "w");
	if (!f)
		return fail("open outfile") + 1;
	for (int i = 0; i < RANGE; i++)
		if (mine[i])
			fprintf(f, "%d %lld\n", i, (long long)mine[i]);
	fclose(f);
	uh_stats st;
	if (uh_stats_get(h, &st) == 0)
		printf("writer %d: %llu commits, %llu conflicts, %llu retries, %d scans lost "
		       "their place\n", id, (unsigned long long)st.commits,
		       (unsigned long long)st.conflicts, (unsigned long long)st.retries, lost);
	uh_disconnect(h);
	return 0;
}
