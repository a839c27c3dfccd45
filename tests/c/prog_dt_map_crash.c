/*
 * prog_dt_map_crash.c -- the workload and the checker of test_dt_map_crash.
 *
 *   prog_dt_map_crash --setup --socket S
 *   prog_dt_map_crash --work --socket S --ack FILE [--ready-fd R --go-fd G]
 *   prog_dt_map_crash --check --socket S --ack FILE
 *
 * --setup makes the starting map: root "dt_map.crash", string keys
 * "k0".."k62" with I64 values 0..62 in a table of 64 buckets: two entries
 * short of more entries than buckets, which starts a resize.
 * --work runs OPS below, each one uh_run block, appending the op's number
 * to the ack file (one write(2), O_APPEND) right after it returned. Op 1
 * starts a resize to 128 buckets; the 64 old buckets then migrate 8 per
 * put/remove, through op 6 (a block of three operations, which also frees
 * the old table). Values include strings made in the block, replaced and
 * removed with UH_FREE_OLD. Ops 9-14 put strings inline in their entries
 * (uh_map_put_bytes): over an I64 value, an inline value and a string
 * object, and back, each a new entry relinked in the old one's place;
 * inserted and removed beside other steps. The arenas every size class needs are leased
 * first, so the ops need no call to heapd (the test may freeze it).
 * Prints "barriers=<n>" when done.
 * --check: uh_map_check, then the map's whole content (one snapshot)
 * must equal the model after the acknowledged ops, or after one more
 * (the op in flight, all of it). Prints "state=<ops applied>"; exit 0 if
 * so, 2 if not (printed).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crash_campaign.h"

#define NKEYS 67
#define NSETUP 63

struct step {
	char kind;		/* 'P' put, 'B' put bytes (inline), 'R' remove */
	int key;
	int64_t ival;		/* an I64 value, when sval is NULL */
	const char *sval;	/* a string value made in the block */
	uint32_t flags;
};

struct op {
	int n;
	struct step s[3];
};

static const struct op OPS[] = {
	{ 1, { { 'P', 63, 63, NULL, 0 } } },			/* load 64/64: no resize */
	{ 1, { { 'P', 64, 64, NULL, 0 } } },			/* resize; step 1 */
	{ 1, { { 'P', 2, 0, "v2", 0 } } },			/* replace; step 2 */
	{ 1, { { 'P', 2, 0, "v2b", UH_FREE_OLD } } },		/* frees "v2"; step 3 */
	{ 1, { { 'R', 10, 0, NULL, 0 } } },			/* step 4 */
	{ 1, { { 'R', 2, 0, NULL, UH_FREE_OLD } } },		/* frees "v2b"; step 5 */
	{ 3, { { 'P', 65, 65, NULL, 0 }, { 'R', 11, 0, NULL, 0 },
	       { 'P', 66, 0, "v66", 0 } } },			/* steps 6-8, old freed */
	{ 1, { { 'R', 66, 0, NULL, UH_FREE_OLD } } },		/* frees "v66" */
	{ 1, { { 'B', 3, 0, "i3", 0 } } },			/* I64 -> inline */
	{ 1, { { 'B', 3, 0, "i3-second", 0 } } },		/* inline -> inline */
	{ 1, { { 'P', 3, 0, "s3", UH_FREE_OLD } } },		/* inline -> object */
	{ 1, { { 'B', 3, 0, "i3-third", UH_FREE_OLD } } },	/* frees "s3" */
	{ 3, { { 'B', 66, 0, "i66", 0 }, { 'R', 3, 0, NULL, 0 },
	       { 'B', 4, 0, "i4", 0 } } },
	{ 1, { { 'R', 66, 0, NULL, UH_FREE_OLD } } },
};
#define NOPS ((int)(sizeof(OPS) / sizeof(OPS[0])))

/* The model: per key, present, and its I64 value or string text, kept
 * inline or not. */
struct mval {
	int present;
	int64_t ival;
	const char *sval;
	int inl;
};

static uh_off map;

static void die(const char *what, int rc)
{
	fprintf(stderr, "prog_dt_map_crash: %s: %s: %s\n", what, uh_strerror(rc), uh_errmsg());
	exit(1);
}

static uh_key key_of(char *buf, size_t len, int k)
{
	uh_key key = { .kind = UH_KEY_STRING };
	key.len = (size_t)snprintf(buf, len, "k%d", k);
	key.data = buf;
	return key;
}

static void model_after(struct mval *m, int nops)
{
	memset(m, 0, NKEYS * sizeof(*m));
	for (int k = 0; k < NSETUP; k++)
		m[k] = (struct mval){ 1, k, NULL, 0 };
	for (int i = 0; i < nops; i++)
		for (int j = 0; j < OPS[i].n; j++) {
			const struct step *s = &OPS[i].s[j];
			if (s->kind != 'R')
				m[s->key] = (struct mval){ 1, s->ival, s->sval, s->kind == 'B' };
			else
				m[s->key].present = 0;
		}
}

/* ---- setup and work ---- */

static int setup_body(uh_heap *h, void *arg)
{
	char buf[16];
	uh_value v = { .type = UH_T_I64 };
	int rc;

	(void)arg;
	if ((rc = uh_map_new(h, UH_KEY_STRING, &map)) != 0 ||
	    (rc = uh_root_set(h, "dt_map.crash", map)) != 0)
		return rc;
	for (int k = 0; k < NSETUP && rc == 0; k++) {
		uh_key key = key_of(buf, sizeof(buf), k);
		v.u.i = k;
		rc = uh_map_put(h, map, &key, &v, 0);
	}
	return rc;
}

static int op_body(uh_heap *h, void *arg)
{
	const struct op *o = arg;
	char buf[16];
	int rc = 0;

	for (int j = 0; j < o->n && rc == 0; j++) {
		const struct step *s = &o->s[j];
		uh_key key = key_of(buf, sizeof(buf), s->key);
		uh_value v = { .type = UH_T_I64, .u.i = s->ival };
		if (s->kind == 'R') {
			rc = uh_map_remove(h, map, &key, NULL, s->flags);
			continue;
		}
		if (s->kind == 'B') {
			rc = uh_map_put_bytes(h, map, &key, UH_T_STRING, s->sval, strlen(s->sval),
					      s->flags);
			continue;
		}
		if (s->sval) {
			v.type = UH_T_STRING;
			if ((rc = uh_string_new(h, s->sval, strlen(s->sval), &v.u.ref)) != 0)
				break;
		}
		rc = uh_map_put(h, map, &key, &v, s->flags);
	}
	return rc;
}

/* The arenas the ops allocate from (strings 32, entries 48, the
 * 128-bucket table 1280) and the classes around them are leased first. */
static void work(uh_heap *h, const char *ack, int ready_fd, int go_fd)
{
	static const uint32_t slots[] = { 32, 48, 64, 80, 96, 112, 128, 1280, 1536, 2048 };
	uh_stats st;
	int rc;
	const char *failed = cc_run_ops(h, ack, ready_fd, go_fd, slots,
					sizeof(slots) / sizeof(slots[0]), op_body, OPS,
					sizeof(OPS[0]), NOPS, &rc);

	if (failed)
		die(failed, rc);
	uh_stats_get(h, &st);
	printf("barriers=%llu commits=%llu\n", (unsigned long long)st.barriers,
	       (unsigned long long)st.commits);
}

/* ---- check ---- */

struct content {
	int seen[NKEYS];
	uh_value val[NKEYS];
	char text[NKEYS][16];
	int bad;
};

static int read_body(uh_heap *h, void *arg)
{
	struct content *c = arg;
	uh_iter it;
	uh_key k;
	uh_value v;
	int rc, q, n;
	char buf[16];

	memset(c, 0, sizeof(*c));
	memset(&it, 0, sizeof(it));
	while ((rc = uh_map_next(h, map, &it, &k, &v)) == 0) {
		if (k.len >= sizeof(buf)) {
			c->bad++;
			continue;
		}
		memcpy(buf, k.data, k.len);
		buf[k.len] = 0;
		if (sscanf(buf, "k%d%n", &q, &n) != 1 || (size_t)n != k.len || q < 0 ||
		    q >= NKEYS || c->seen[q]++) {
			c->bad++;
			continue;
		}
		c->val[q] = v;
		if (v.type == UH_T_STRING || v.type == UH_T_ISTRING) {
			const void *s;
			size_t len;
			if ((rc = uh_value_bytes(h, &v, &s, &len)) != 0)
				return rc;
			snprintf(c->text[q], sizeof(c->text[q]), "%.*s", (int)len, (const char *)s);
		}
	}
	return rc == UH_ENOTFOUND ? 0 : rc;
}

/* Number of keys where the content differs from the model. */
static int differences(const struct content *c, const struct mval *m)
{
	int diff = c->bad;

	for (int q = 0; q < NKEYS; q++) {
		if (c->seen[q] != m[q].present) {
			diff++;
		} else if (m[q].present) {
			uint32_t st = m[q].inl ? UH_T_ISTRING : UH_T_STRING;
			if (m[q].sval ? c->val[q].type != st || strcmp(c->text[q], m[q].sval) :
					c->val[q].type != UH_T_I64 || c->val[q].u.i != m[q].ival)
				diff++;
		}
	}
	return diff;
}

static int check(uh_heap *h, const char *ack)
{
	static struct content c;
	struct mval m[NKEYS];
	int acked = (int)th_count_lines(ack), rc;
	uint64_t len;

	if ((rc = uh_map_check(h, map)) != 0) {
		fprintf(stderr, "uh_map_check: %s\n", uh_errmsg());
		return 2;
	}
	if ((rc = uh_run(h, read_body, &c, 0)) != 0 || (rc = uh_map_len(h, map, &len)) != 0)
		die("read the map", rc);
	for (int state = acked; state <= acked + 1 && state <= NOPS; state++) {
		model_after(m, state);
		if (differences(&c, m) == 0) {
			printf("state=%d acked=%d len=%llu\n", state, acked, (unsigned long long)len);
			return 0;
		}
	}
	model_after(m, acked);
	fprintf(stderr, "map differs from the model after %d (or %d) ops at %d keys\n", acked,
		acked + 1, differences(&c, m));
	return 2;
}

int main(int argc, char **argv)
{
	struct cc_args a;
	uh_heap *h;
	int rc;

	cc_parse_args(argc, argv, &a);
	const char *sock = a.sock, *ack = a.ack, *mode = a.mode;
	if (!mode || !sock || (strcmp(mode, "--setup") && !ack)) {
		fprintf(stderr, "usage: prog_dt_map_crash --setup|--work|--check --socket S "
			"[--ack FILE] [--ready-fd R --go-fd G]\n");
		return 1;
	}
	if ((rc = uh_connect(sock, 0, &h)) != 0)
		die("connect", rc);
	if (!strcmp(mode, "--setup")) {
		if ((rc = uh_run(h, setup_body, NULL, 0)) != 0)
			die("setup", rc);
		uh_disconnect(h);
		return 0;
	}
	if ((rc = uh_root_get(h, "dt_map.crash", &map)) != 0)
		die("root dt_map.crash", rc);
	if (!strcmp(mode, "--work")) {
		work(h, ack, a.ready_fd, a.go_fd);
		rc = 0;
	} else {
		rc = check(h, ack);
	}
	uh_disconnect(h);
	return rc;
}
