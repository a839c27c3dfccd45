/*
 * prog_inline_crash.c -- workload and checker of test_inline_crash:
 * inline field writes (FORMAT.md 3.2) cut by a crash.
 *
 *   prog_inline_crash --setup --socket S
 *       register class "crash.Inline" (n: i64, v0..v2: inline bytes of
 *       capacity 100, s: inline string of capacity 40) and publish one
 *       record under root "inline.crash"
 *   prog_inline_crash --work --socket S --ack F [--ready-fd R --go-fd G]
 *       op i (one block each, NOPS ops): n = i + 1 and one inline field
 *       rewritten in place with a value of i's pattern and a length that
 *       goes up and down (shorter values leave zeros behind them); every
 *       third op rewrites two more fields in the same block. Appends
 *       "i\n" to F after each.
 *   prog_inline_crash --check --socket S --ack F
 *       the record must be the model after the acknowledged ops or after
 *       one more (the op in flight, all or nothing): every field's length
 *       and bytes, and zeros past each value up to its capacity. Prints
 *       "state=<ops applied>".
 * Exit 0 ok, 1 mismatch or error (printed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crash_campaign.h"

#define NOPS 24
#define NF 4		/* inline fields: v0, v1, v2, s (indexes 1..4) */
#define CAP_V 100
#define CAP_S 40

static const uint32_t CAPS[NF] = { CAP_V, CAP_V, CAP_V, CAP_S };
static const uh_field_spec FIELDS[] = {
	{ "n", UH_T_I64, 0 },	    { "v0", UH_T_IBYTES, CAP_V }, { "v1", UH_T_IBYTES, CAP_V },
	{ "v2", UH_T_IBYTES, CAP_V }, { "s", UH_T_ISTRING, CAP_S },
};

/* The model: each inline field's value after n ops. */
struct model {
	int64_t n;
	uint32_t len[NF];
	char val[NF][CAP_V];
};

/* Field f's value written by op i: its length and bytes (ASCII, so it is
 * also a valid string). */
static uint32_t value_of(int i, int f, char *out)
{
	uint32_t len = (uint32_t)((i * 37 + f * 11) % (int)(CAPS[f] + 1));

	for (uint32_t k = 0; k < len; k++)
		out[k] = (char)('a' + (i * 7 + f * 3 + (int)k) % 26);
	return len;
}

/* The fields op i writes: f0, and with every third op two more. */
static int fields_of(int i, int *fs)
{
	fs[0] = i % NF;
	if (i % 3 != 2)
		return 1;
	fs[1] = (i + 1) % NF;
	fs[2] = (i + 2) % NF;
	return 3;
}

static void model_run(struct model *m, int n)
{
	memset(m, 0, sizeof(*m));
	for (int i = 0; i < n; i++) {
		int fs[3], k = fields_of(i, fs);
		for (int j = 0; j < k; j++)
			m->len[fs[j]] = value_of(i, fs[j], m->val[fs[j]]);
		m->n = i + 1;
	}
}

static uh_off record(uh_heap *h)
{
	uh_off r = 0;

	return uh_root_get(h, "inline.crash", &r) == 0 ? r : 0;
}

static int op_body(uh_heap *h, void *arg)
{
	int i = *(const int *)arg, fs[3], k = fields_of(i, fs), rc;
	uh_off r = record(h);
	char v[CAP_V];

	if (!r)
		return UH_ENOTFOUND;
	if ((rc = uh_set_i64(h, r, 0, i + 1)) != 0)
		return rc;
	for (int j = 0; j < k && !rc; j++) {
		uint32_t len = value_of(i, fs[j], v);
		rc = uh_set_inline(h, r, (uint32_t)fs[j] + 1, v, len);
	}
	return rc;
}

static int matches(uh_heap *h, int n, uint64_t *live, int say)
{
	struct model m;
	uh_off r = record(h);
	unsigned char rec[512];
	size_t len = 0;
	uh_field_info fi;
	uint32_t cls = 0;

	*live = 0;
	model_run(&m, n);
	if (!r || uh_obj_class(h, r, &cls) != 0 || uh_record_read(h, r, rec, sizeof(rec), &len)) {
		if (say)
			printf("after %d ops: the record cannot be read: %s\n", n, uh_errmsg());
		return 0;
	}
	int64_t got_n;
	memcpy(&got_n, rec, 8);
	if (got_n != m.n) {
		if (say)
			printf("after %d ops: n is %lld, want %lld\n", n, (long long)got_n,
			       (long long)m.n);
		return 0;
	}
	for (int f = 0; f < NF; f++) {
		uint32_t at, got;
		if (uh_field_info_get(h, cls, (uint32_t)f + 1, &fi) != 0)
			return 0;
		at = fi.offset - 16;
		memcpy(&got, rec + at, 4);
		int bad = got != m.len[f] || memcmp(rec + at + 4, m.val[f], m.len[f]) != 0;
		for (uint32_t b = m.len[f]; !bad && b < CAPS[f]; b++)	/* bound: capacity */
			bad = rec[at + 4 + b] != 0;
		if (bad) {
			if (say)
				printf("after %d ops: field %d holds %u bytes, want %u (or its bytes or "
				       "the zeros after them differ)\n", n, f, got, m.len[f]);
			return 0;
		}
	}
	if (!say)	/* the model it matches: the campaign counts undone and done */
		printf("state=%d\n", n);
	return 1;
}

static int setup(uh_heap *h)
{
	uint32_t cls;
	uh_off r;
	int rc = 0;

	if ((rc = uh_class_register(h, "crash.Inline", FIELDS, 5, &cls)) != 0 ||
	    (rc = uh_begin(h)) != 0 || (rc = uh_alloc(h, cls, &r)) != 0 ||
	    (rc = uh_root_set(h, "inline.crash", r)) != 0 || (rc = uh_commit(h)) != 0)
		printf("setup: %s\n", uh_errmsg());
	return rc != 0;
}

int main(int argc, char **argv)
{
	return cc_ops_main(argc, argv, "prog_inline_crash", setup, op_body, NOPS, matches);
}
