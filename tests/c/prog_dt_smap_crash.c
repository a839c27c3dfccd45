/*
 * prog_dt_smap_crash.c -- the workload and the checker of
 * test_dt_smap_crash.
 *
 *   prog_dt_smap_crash --setup --socket S
 *   prog_dt_smap_crash --work --socket S --ack FILE --n N [--ready-fd R --go-fd G]
 *   prog_dt_smap_crash --check --socket S --ack FILE --n N
 *
 * --setup makes two sorted maps. "smap.crash.a" (string keys "k%06d" of
 * 0, 10, 20, ...; I64 value 3*num+1), filled in ascending order until the
 * tree has height 2, a full root (30 keys) and a full last (packed) leaf: the next
 * put at the end splits the leaf, the root, and adds a level. Prints
 * "n=<keys>". "smap.crash.b" (i64 keys 0..30): two leaves (15 + 16), a
 * root with one key.
 * --work runs OPS below, each one uh_run block, appending the op's number
 * to the ack file right after it returned. Arenas of every size class
 * are leased first so that no op needs heapd (the test may freeze it).
 * Prints "barriers=<n> height_a=<h> height_b=<h>".
 * --check: uh_smap_check on both maps, then their whole content (one
 * snapshot) must equal the model after the acknowledged ops or after one
 * more (the op in flight, all of it). Prints "state=<ops applied>
 * acked=<n>"; exit 0 if so, 2 if not.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crash_campaign.h"
#include "uhint.h"

#define NUMS 8000	/* map A key numbers 0..NUMS-1 */
#define BLO (-10)	/* map B keys BLO..BHI */
#define BHI 120
#define END (-1000)

struct step {
	char kind;		/* 'P' put, 'R' remove, 'X' remove all in [key, hi] */
	char map;		/* 'A' or 'B' */
	int key;		/* key number; END = N*10 (after the last of map A) */
	int hi;
	const char *sval;	/* a string value made in the block, or NULL */
	uint32_t flags;
};

struct op {
	int n;
	struct step s[3];
};

static const struct op OPS[] = {
	{ 1, { { 'P', 'A', END, 0, NULL, 0 } } },		/* leaf + root split, height 3 */
	{ 1, { { 'P', 'A', 15, 0, NULL, 0 } } },		/* plain insert */
	{ 1, { { 'P', 'A', 20, 0, "first", 0 } } },		/* replace */
	{ 1, { { 'P', 'A', 20, 0, "second", UH_FREE_OLD } } },	/* frees "first" */
	{ 1, { { 'R', 'A', 20, 0, NULL, UH_FREE_OLD } } },	/* frees "second" */
	{ 1, { { 'X', 'A', 0, 140, NULL, 0 } } },		/* first leaf emptied, freed */
	{ 1, { { 'X', 'B', 15, 30, NULL, 0 } } },		/* leaf freed, root collapses */
	{ 3, { { 'P', 'B', 100, 0, NULL, 0 }, { 'R', 'B', 0, 0, NULL, 0 },
	       { 'P', 'B', -5, 0, "neg", 0 } } },
};
#define NOPS ((int)(sizeof(OPS) / sizeof(OPS[0])))

static long nsetup;	/* keys of map A made by --setup */

static void die(const char *what, int rc)
{
	fprintf(stderr, "prog_dt_smap_crash: %s: %d %s: %s\n", what, rc, rc ? uh_strerror(rc) : "",
		rc ? uh_errmsg() : "");
	exit(2);
}

static int keynum(int key)
{
	return key == END ? (int)nsetup * 10 : key;
}

static void a_key(int num, char *buf, uh_key *k)
{
	memset(k, 0, sizeof(*k));
	k->kind = UH_KEY_STRING;
	k->len = (size_t)snprintf(buf, 16, "k%06d", num);
	k->data = buf;
}

static void b_key(int num, uh_key *k)
{
	memset(k, 0, sizeof(*k));
	k->kind = UH_KEY_I64;
	k->i64 = num;
}

/* ---- the model ---- */

struct model {
	char a[NUMS];			/* 0 absent, 1 i64 value, 2 string value */
	char atext[NUMS][8];
	char b[BHI - BLO + 1];
	char btext[BHI - BLO + 1][8];
};

static void model_step(struct model *md, const struct step *s)
{
	int num = keynum(s->key);
	char *pres = s->map == 'A' ? &md->a[num] : &md->b[num - BLO];
	char *text = s->map == 'A' ? md->atext[num] : md->btext[num - BLO];

	if (s->kind == 'P') {
		*pres = s->sval ? 2 : 1;
		snprintf(text, 8, "%s", s->sval ? s->sval : "");
	} else if (s->kind == 'R') {
		*pres = 0;
	} else {
		for (int i = num; i <= s->hi; i++)
			if (s->map == 'A')
				md->a[i] = 0;
			else
				md->b[i - BLO] = 0;
	}
}

static void model_at(struct model *md, int nops)
{
	memset(md, 0, sizeof(*md));
	for (long i = 0; i < nsetup; i++)
		md->a[i * 10] = 1;
	for (int i = 0; i <= 30; i++)
		md->b[i - BLO] = 1;
	for (int o = 0; o < nops; o++)
		for (int j = 0; j < OPS[o].n; j++)
			model_step(md, &OPS[o].s[j]);
}

/* ---- setup ---- */

/* The format's slots (see smap.c): header [2] root, [3] height; node [0]
 * meta (n in the low 32 bits), children from slot 32. A packed leaf
 * (smap_leaf.h) keeps its count where a node's meta value lies (payload
 * offset 8), and is full at 23 entries. */
static uint64_t slot_val(uh_heap *h, uh_off obj, unsigned i)
{
	return *(const uint64_t *)(h->base + UH_REF_OFFSET(obj) + 16 + 16 * i + 8);
}

static uint64_t height_of(uh_heap *h, const char *name)
{
	uh_off m;
	return uh_root_get(h, name, &m) == 0 ? slot_val(h, m, 3) : 0;
}

static int a_ready(uh_heap *h, uh_off m)
{
	if (slot_val(h, m, 3) != 2)
		return 0;
	uh_off root = slot_val(h, m, 2);
	uint32_t n = (uint32_t)slot_val(h, root, 0);
	if (n != 30)
		return 0;
	uh_off last = slot_val(h, root, 32 + n);
	return (uint32_t)slot_val(h, last, 0) == 23;
}

static void setup(uh_heap *h)
{
	uh_off a, b;
	char buf[16];
	uh_key k;
	uh_value v = { .type = UH_T_I64 };
	int rc;

	if ((rc = uh_smap_new(h, UH_KEY_STRING, &a)) != 0 || (rc = uh_root_set(h, "smap.crash.a", a)) != 0 ||
	    (rc = uh_smap_new(h, UH_KEY_I64, &b)) != 0 || (rc = uh_root_set(h, "smap.crash.b", b)) != 0)
		die("setup", rc);
	for (nsetup = 0; !a_ready(h, a); nsetup++) {
		if (nsetup * 10 >= NUMS - 20)
			die("setup: tree never got the wanted shape", 0);
		a_key((int)nsetup * 10, buf, &k);
		v.u.i = nsetup * 30 + 1;
		if ((rc = uh_smap_put(h, a, &k, &v, 0)) != 0)
			die("setup put", rc);
	}
	for (int i = 0; i <= 30; i++) {
		b_key(i, &k);
		v.u.i = 3 * i + 1;
		if ((rc = uh_smap_put(h, b, &k, &v, 0)) != 0)
			die("setup put", rc);
	}
	if ((rc = uh_smap_check(h, a)) != 0 || (rc = uh_smap_check(h, b)) != 0)
		die("setup check", rc);
	printf("n=%ld height_a=%llu height_b=%llu\n", nsetup,
	       (unsigned long long)slot_val(h, a, 3), (unsigned long long)slot_val(h, b, 3));
}

/* ---- work ---- */

static int do_step(uh_heap *h, uh_off m, const struct step *s)
{
	int num = keynum(s->key), rc;
	char buf[16];
	uh_key k;
	uh_value v = { .type = UH_T_I64, .u.i = 3 * (int64_t)num + 1 };

	if (s->map == 'A')
		a_key(num, buf, &k);
	else
		b_key(num, &k);
	if (s->kind == 'P') {
		if (s->sval) {
			v.type = UH_T_STRING;
			if ((rc = uh_string_new(h, s->sval, strlen(s->sval), &v.u.ref)) != 0)
				return rc;
		}
		return uh_smap_put(h, m, &k, &v, s->flags);
	}
	if (s->kind == 'R')
		return uh_smap_remove(h, m, &k, NULL, s->flags);
	/* X: remove what a scan from key finds up to hi (in this block). */
	for (int i = num; i <= s->hi; i++) {
		uh_iter it;
		uh_key got;
		if ((rc = uh_smap_scan(h, m, &k, 0, &it)) != 0)
			return rc;
		rc = uh_smap_next(h, m, &it, &got, NULL);
		if (rc == UH_ENOTFOUND)
			return 0;
		if (rc)
			return rc;
		char gb[16];
		uh_key gk = got;
		int gnum = (int)got.i64;
		if (s->map == 'A') {
			snprintf(gb, sizeof(gb), "%.*s", (int)got.len, (const char *)got.data);
			gnum = atoi(gb + 1);
			gk.data = gb;
		}
		if (gnum > s->hi)
			return 0;
		if ((rc = uh_smap_remove(h, m, &gk, NULL, s->flags)) != 0)
			return rc;
	}
	return 0;
}

static int op_body(uh_heap *h, void *arg)
{
	const struct op *op = arg;
	uh_off a, b;
	int rc;

	if ((rc = uh_root_get(h, "smap.crash.a", &a)) != 0 ||
	    (rc = uh_root_get(h, "smap.crash.b", &b)) != 0)
		return rc;
	for (int j = 0; j < op->n; j++)
		if ((rc = do_step(h, op->s[j].map == 'A' ? a : b, &op->s[j])) != 0)
			return rc;
	return 0;
}

/* The arenas the ops allocate from are leased first. */
static void work(uh_heap *h, const char *ack, int ready_fd, int go_fd)
{
	static const uint32_t slots[] = { 32, 48, 64, 80, 96, 112, 128, 1024 };
	uh_stats st;
	int rc;
	const char *failed = cc_run_ops(h, ack, ready_fd, go_fd, slots,
					sizeof(slots) / sizeof(slots[0]), op_body, OPS,
					sizeof(OPS[0]), NOPS, &rc);

	if (failed)
		die(failed, rc);
	uh_stats_get(h, &st);
	printf("barriers=%llu height_a=%llu height_b=%llu\n", (unsigned long long)st.barriers,
	       (unsigned long long)height_of(h, "smap.crash.a"),
	       (unsigned long long)height_of(h, "smap.crash.b"));
}

/* ---- check ---- */

static struct model got;

static int read_map(uh_heap *h, uh_off m, int is_a)
{
	uh_iter it;
	uh_key k;
	uh_value v;
	int rc;

	if ((rc = uh_smap_scan(h, m, NULL, 0, &it)) != 0)
		return rc;
	while ((rc = uh_smap_next(h, m, &it, &k, &v)) == 0) {
		char kb[16], *pres, *text;
		int num;
		if (is_a) {
			snprintf(kb, sizeof(kb), "%.*s", (int)k.len, (const char *)k.data);
			num = atoi(kb + 1);
			if (k.len != 7 || num < 0 || num >= NUMS) {
				fprintf(stderr, "map a holds a bad key '%s'\n", kb);
				return -100;
			}
			pres = &got.a[num];
			text = got.atext[num];
		} else {
			num = (int)k.i64;
			if (num < BLO || num > BHI) {
				fprintf(stderr, "map b holds a bad key %d\n", num);
				return -100;
			}
			pres = &got.b[num - BLO];
			text = got.btext[num - BLO];
		}
		if (v.type == UH_T_I64 && v.u.i == 3 * (int64_t)num + 1) {
			*pres = 1;
		} else if (v.type == UH_T_STRING) {
			const char *d;
			size_t len;
			if ((rc = uh_string_get(h, v.u.ref, &d, &len)) != 0)
				return rc;
			*pres = 2;
			snprintf(text, 8, "%.*s", (int)len, d);
		} else {
			fprintf(stderr, "key %d has a wrong value\n", num);
			return -101;
		}
	}
	return rc == UH_ENOTFOUND ? 0 : rc;
}

static int read_body(uh_heap *h, void *arg)
{
	uh_off a, b;
	int rc;

	(void)arg;
	memset(&got, 0, sizeof(got));
	if ((rc = uh_root_get(h, "smap.crash.a", &a)) != 0 ||
	    (rc = uh_root_get(h, "smap.crash.b", &b)) != 0 ||
	    (rc = read_map(h, a, 1)) != 0)
		return rc;
	return read_map(h, b, 0);
}

static int same(const struct model *x, const struct model *y)
{
	for (int i = 0; i < NUMS; i++)
		if (x->a[i] != y->a[i] || (x->a[i] == 2 && strcmp(x->atext[i], y->atext[i])))
			return 0;
	for (int i = 0; i <= BHI - BLO; i++)
		if (x->b[i] != y->b[i] || (x->b[i] == 2 && strcmp(x->btext[i], y->btext[i])))
			return 0;
	return 1;
}

static int check(uh_heap *h, const char *ack)
{
	static struct model want;
	uh_off a, b;
	int acked = (int)th_count_lines(ack), rc;

	if ((rc = uh_root_get(h, "smap.crash.a", &a)) != 0 ||
	    (rc = uh_root_get(h, "smap.crash.b", &b)) != 0)
		die("roots", rc);
	if ((rc = uh_smap_check(h, a)) != 0)
		die("check of map a", rc);
	if ((rc = uh_smap_check(h, b)) != 0)
		die("check of map b", rc);
	if ((rc = uh_run(h, read_body, NULL, 0)) != 0)
		die("read", rc);
	for (int s = acked; s <= acked + 1 && s <= NOPS; s++) {
		model_at(&want, s);
		if (same(&want, &got)) {
			printf("state=%d acked=%d height_a=%llu height_b=%llu\n", s, acked,
			       (unsigned long long)height_of(h, "smap.crash.a"),
			       (unsigned long long)height_of(h, "smap.crash.b"));
			return 0;
		}
	}
	printf("content matches neither %d nor %d ops\n", acked, acked + 1);
	return 2;
}

int main(int argc, char **argv)
{
	struct cc_args a;
	uh_heap *h;
	int rc;

	cc_parse_args(argc, argv, &a);
	const char *sock = a.sock, *ack = a.ack, *mode = a.mode;
	nsetup = a.n;
	if (!mode || !sock || (strcmp(mode, "--setup") && (!ack || nsetup <= 0))) {
		fprintf(stderr, "usage: prog_dt_smap_crash --setup|--work|--check --socket S "
			"[--ack FILE --n N] [--ready-fd R --go-fd G]\n");
		return 2;
	}
	if ((rc = uh_connect(sock, 0, &h)) != 0)
		die("connect", rc);
	if (!strcmp(mode, "--setup"))
		setup(h);
	else if (!strcmp(mode, "--work"))
		work(h, ack, a.ready_fd, a.go_fd);
	else
		return check(h, ack);
	uh_disconnect(h);
	return 0;
}
