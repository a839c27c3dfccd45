/*
 * prog_dt_list_crash.c -- workload and checker of test_dt_list_crash.
 *
 *   prog_dt_list_crash --socket S --setup
 *       create the empty list under root "dt_list.crash" and an array of
 *       ALEN null strings under root "dt_array.crash"
 *   prog_dt_list_crash --socket S --work --ack FILE
 *       run the fixed operations OPS (each one block: a single list call
 *       or a uh_run group), appending the op number to FILE after each
 *       returns (one write(2) on O_APPEND: survives SIGKILL); prints
 *       "barriers=<n>" at the end
 *   prog_dt_list_crash --socket S --check --ack FILE
 *       the list must equal the model after the acknowledged ops, or
 *       after one more (the op in flight, all or nothing); then a
 *       structural walk through the mapping (header slots tagged, length
 *       <= capacity, slots past the length empty, no lock left held).
 *       The array must equal its model too. Prints "ops=<n>
 *       data_objects=<n>" (list header + storage + array + the strings
 *       both reference) and exits 0, or prints the problem and exits 1.
 *
 * The operations grow the list past capacities 8, 16, 32 and 64, rebuild
 * its storage for long shifts (insert/pop near the front), shift in
 * place, and pop/set with UH_FREE_OLD, so every path of list.c that
 * allocates or frees is crossed by some crash point; the last three set
 * string elements of the array with UH_FREE_OLD, one of them in a block
 * that also appends to the list.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crash_campaign.h"
#include "format.h"
#include "powerloss.h"
#include "uniheap.h"

enum { APPEND = 1, INSERT, POP, SET, ASET };	/* ASET: array element */
enum { MAXE = 256, MAXACT = 40, ALEN = 4 };

/* A primitive: kind, index (-1: last element), value (str: a string;
 * for ASET a string or, if NULL, null, stored with UH_FREE_OLD). */
struct act {
	int kind;
	int64_t index;
	int64_t i;
	const char *str;
};

struct op {
	int nact;
	struct act a[MAXACT];
};

#define AP(v) { APPEND, 0, v, NULL }
#define APS(s) { APPEND, 0, 0, s }

/* Group 5 appends 30 values: every third a string. */
static const struct op OPS[] = {
	{ 6, { AP(100), AP(101), AP(102), AP(103), AP(104), AP(105) } },
	{ 1, { APS("a2") } },
	{ 1, { APS("a3") } },
	{ 1, { AP(4) } },				/* grows 8 -> 16 */
	{ 30, { APS("b0"), AP(1), AP(2), APS("b3"), AP(4), AP(5), APS("b6"), AP(7),
		AP(8), APS("b9"), AP(10), AP(11), APS("b12"), AP(13), AP(14), APS("b15"),
		AP(16), AP(17), APS("b18"), AP(19), AP(20), APS("b21"), AP(22), AP(23),
		APS("b24"), AP(25), AP(26), APS("b27"), AP(28), AP(29) } },	/* to 64 */
	{ 1, { { INSERT, 0, 0, "i6" } } },		/* shift 39: rebuild */
	{ 1, { { INSERT, 20, 7, NULL } } },		/* shift in place */
	{ 1, { { POP, 0, UH_FREE_OLD, NULL } } },	/* rebuild, frees "i6" */
	{ 1, { { POP, -1, UH_FREE_OLD, NULL } } },
	{ 1, { { SET, 5, 0, "s10" } } },		/* FREE_OLD always for SET */
	{ 1, { { SET, 5, 11, NULL } } },		/* frees "s10" */
	{ 1, { { POP, 3, UH_FREE_OLD, NULL } } },
	{ 3, { { INSERT, 10, 0, "x13" }, { POP, 30, UH_FREE_OLD, NULL }, AP(13) } },
	{ 4, { { POP, 0, UH_FREE_OLD, NULL }, { POP, 0, UH_FREE_OLD, NULL },
	       { POP, 0, UH_FREE_OLD, NULL }, { INSERT, 1, 0, "y14" } } },
	{ 1, { APS("e15") } },
	{ 1, { { SET, 0, 0, "z16" } } },
	{ 1, { { ASET, 0, 0, "c17" } } },
	{ 1, { { ASET, 0, 0, "c18" } } },		/* frees "c17" */
	{ 3, { { ASET, 1, 0, "c19" }, { ASET, 0, 0, NULL }, APS("l19") } },
};
#define NOPS ((int)(sizeof(OPS) / sizeof(OPS[0])))

/* ---- model ---- */

struct melem {
	int is_str;
	int64_t i;
	char s[16];
};

static struct melem model[MAXE];
static int64_t mlen;
static struct melem amodel[ALEN];	/* the array "dt_array.crash" */

static int64_t idx(int64_t index, int64_t len)
{
	return index < 0 ? len + index : index;
}

static void model_act(const struct act *a)
{
	struct melem e = { a->str != NULL, a->i, "" };
	if (a->str)
		snprintf(e.s, sizeof(e.s), "%s", a->str);
	int64_t i = idx(a->index, mlen);
	switch (a->kind) {
	case APPEND: model[mlen++] = e; break;
	case INSERT:
		memmove(&model[i + 1], &model[i], (size_t)(mlen - i) * sizeof(e));
		model[i] = e;
		mlen++;
		break;
	case POP:
		memmove(&model[i], &model[i + 1], (size_t)(mlen - i - 1) * sizeof(e));
		mlen--;
		break;
	case SET: model[i] = e; break;
	case ASET: amodel[a->index] = e; break;
	}
}

static void model_run(int nops)
{
	mlen = 0;
	memset(amodel, 0, sizeof(amodel));
	for (int k = 0; k < nops && k < NOPS; k++)
		for (int j = 0; j < OPS[k].nact; j++)
			model_act(&OPS[k].a[j]);
}

/* ---- heap ---- */

static uh_off list, arr;

static int heap_act(uh_heap *h, const struct act *a)
{
	uh_value v = { .type = UH_T_I64 };
	uint64_t len;
	int rc;

	v.u.i = a->i;
	if (a->str) {
		v.type = UH_T_STRING;
		if ((rc = uh_string_new(h, a->str, strlen(a->str), &v.u.ref)) != 0)
			return rc;
	}
	if (a->kind == ASET) {
		v.type = UH_T_STRING;
		return uh_array_set(h, arr, (uint64_t)a->index, &v, UH_FREE_OLD);
	}
	if ((rc = uh_list_len(h, list, &len)) != 0)
		return rc;
	uint64_t i = (uint64_t)idx(a->index, (int64_t)len);
	switch (a->kind) {
	case APPEND: return uh_list_append(h, list, &v);
	case INSERT: return uh_list_insert(h, list, i, &v);
	case POP: return uh_list_pop(h, list, i, NULL, (uint32_t)a->i);
	default: return uh_list_set(h, list, i, &v, UH_FREE_OLD);
	}
}

static int op_body(uh_heap *h, void *arg)
{
	const struct op *o = arg;
	for (int j = 0; j < o->nact; j++) {
		int rc = heap_act(h, &o->a[j]);
		if (rc)
			return rc;
	}
	return 0;
}

static int fail(const char *what, int rc)
{
	printf("FAIL %s: %s: %s\n", what, uh_strerror(rc), uh_errmsg());
	return 1;
}

static int work(uh_heap *h, const char *ackp)
{
	int fd = open(ackp, O_WRONLY | O_CREAT | O_APPEND, 0600);
	int rc;

	if (fd < 0)
		return fail("ack file", UH_EIO);
	for (int k = 0; k < NOPS; k++) {
		/* A single action without a new string runs in the list call's
		 * implicit block; anything else in one uh_run block. */
		if (OPS[k].nact == 1 && !OPS[k].a[0].str)
			rc = heap_act(h, &OPS[k].a[0]);
		else
			rc = uh_run(h, op_body, (void *)&OPS[k], 0);
		if (rc)
			return fail("op", rc);
		char line[16];
		int n = snprintf(line, sizeof(line), "%d\n", k + 1);
		if (write(fd, line, (size_t)n) != n)
			return fail("ack write", UH_EIO);
		pl_mark(line, (size_t)n);	/* the power-loss test's copy */
	}
	uh_stats st;
	uh_stats_get(h, &st);
	printf("barriers=%llu ops=%d\n", (unsigned long long)st.barriers, NOPS);
	return 0;
}

/* 1 when the list holds exactly the model. */
static int list_is_model(uh_heap *h, int64_t *nstr)
{
	uint64_t len;

	*nstr = 0;
	if (uh_list_len(h, list, &len) != 0 || (int64_t)len != mlen)
		return 0;
	for (int64_t i = 0; i < mlen; i++) {
		uh_value v;
		if (uh_list_get(h, list, (uint64_t)i, &v) != 0)
			return 0;
		if (!model[i].is_str) {
			if (v.type != UH_T_I64 || v.u.i != model[i].i)
				return 0;
			continue;
		}
		const char *s;
		size_t n;
		if (v.type != UH_T_STRING || uh_string_get(h, v.u.ref, &s, &n) != 0 ||
		    n != strlen(model[i].s) || memcmp(s, model[i].s, n) != 0)
			return 0;
		(*nstr)++;
	}
	return 1;
}

/* 1 when the array holds exactly its model. */
static int array_is_model(uh_heap *h, int64_t *nstr)
{
	*nstr = 0;
	for (int i = 0; i < ALEN; i++) {
		uh_value v;
		const char *s;
		size_t n;
		if (uh_array_get(h, arr, (uint64_t)i, &v) != 0 || v.type != UH_T_STRING)
			return 0;
		if (!amodel[i].is_str) {
			if (v.u.ref)
				return 0;
			continue;
		}
		if (uh_string_get(h, v.u.ref, &s, &n) != 0 || n != strlen(amodel[i].s) ||
		    memcmp(s, amodel[i].s, n) != 0)
			return 0;
		(*nstr)++;
	}
	return 1;
}

static int unlocked(const char *base, uh_off obj)
{
	const struct uh_objhdr *o = (const void *)(base + UH_REF_OFFSET(obj));
	return !uh_lock_is_locked(o->lock);
}

/* Walk the persistent layout directly; *storage = 1 if there is one. */
static int structure_ok(uh_heap *h, int *storage)
{
	const char *base = uh_base(h);
	const struct uh_slot *hs = (const void *)(base + UH_REF_OFFSET(list) + UH_OBJHDR_SIZE);
	uint32_t cls;

	*storage = 0;
	if (uh_slot_type(hs[0].tag) != UH_T_I64 || uh_slot_type(hs[1].tag) != UH_T_REF) {
		printf("FAIL header slots tagged %u, %u\n", uh_slot_type(hs[0].tag),
		       uh_slot_type(hs[1].tag));
		return 0;
	}
	if (!unlocked(base, list)) {
		printf("FAIL list header still locked\n");
		return 0;
	}
	uh_off st = hs[1].value;
	if (!st)
		return hs[0].value == 0;
	*storage = 1;
	if (uh_obj_class(h, st, &cls) != 0 || cls != UH_CLASS_VALUES || !unlocked(base, st)) {
		printf("FAIL storage %llu: not a live unlocked VALUES object\n",
		       (unsigned long long)st);
		return 0;
	}
	const struct uh_objhdr *o = (const void *)(base + UH_REF_OFFSET(st));
	uint64_t cap = (o->size & UH_OBJ_SIZE_MASK) / sizeof(struct uh_slot);
	const struct uh_slot *ss = (const void *)(o + 1);
	if (hs[0].value > cap) {
		printf("FAIL length %llu > capacity %llu\n", (unsigned long long)hs[0].value,
		       (unsigned long long)cap);
		return 0;
	}
	for (uint64_t i = hs[0].value; i < cap; i++)
		if (ss[i].tag || ss[i].value) {
			printf("FAIL slot %llu past the length is not empty\n",
			       (unsigned long long)i);
			return 0;
		}
	return 1;
}

static int check(uh_heap *h, const char *ackp)
{
	int acked = (int)th_count_lines(ackp), storage;
	int64_t nstr, astr;

	for (int n = acked; n <= acked + 1 && n <= NOPS; n++) {
		model_run(n);
		if (!list_is_model(h, &nstr) || !array_is_model(h, &astr))
			continue;
		if (!structure_ok(h, &storage))
			return 1;
		if (!unlocked(uh_base(h), arr)) {
			printf("FAIL array still locked\n");
			return 1;
		}
		printf("ops=%d acked=%d data_objects=%lld\n", n, acked,
		       (long long)(2 + storage + nstr + astr));
		return 0;
	}
	printf("FAIL list matches neither the model after %d acked ops nor after %d\n", acked,
	       acked + 1);
	return 1;
}

int main(int argc, char **argv)
{
	const char *sock = NULL, *ackp = NULL, *mode = NULL;
	uh_heap *h;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--socket") && i + 1 < argc) sock = argv[++i];
		else if (!strcmp(argv[i], "--ack") && i + 1 < argc) ackp = argv[++i];
		else mode = argv[i];
	}
	if (!sock || !mode || (strcmp(mode, "--setup") && !ackp)) {
		fprintf(stderr, "usage: prog_dt_list_crash --socket S "
			"(--setup | --work --ack F | --check --ack F)\n");
		return 2;
	}
	if ((rc = uh_connect(sock, 0, &h)) != 0)
		return fail("connect", rc);
	if (!strcmp(mode, "--setup")) {
		if ((rc = uh_begin(h)) != 0 || (rc = uh_list_new(h, &list)) != 0 ||
		    (rc = uh_root_set(h, "dt_list.crash", list)) != 0 ||
		    (rc = uh_array_new(h, UH_T_STRING, ALEN, &arr)) != 0 ||
		    (rc = uh_root_set(h, "dt_array.crash", arr)) != 0 || (rc = uh_commit(h)) != 0)
			return fail("setup", rc);
		uh_disconnect(h);
		return 0;
	}
	if ((rc = uh_root_get(h, "dt_list.crash", &list)) != 0 ||
	    (rc = uh_root_get(h, "dt_array.crash", &arr)) != 0)
		return fail("root", rc);
	rc = !strcmp(mode, "--work") ? work(h, ackp) : check(h, ackp);
	uh_disconnect(h);
	return rc;
}
