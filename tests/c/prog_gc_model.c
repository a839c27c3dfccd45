/*
 * prog_gc_model.c -- one process of test_gc_model: builds, shares, pins,
 * unlinks and re-links chains of objects in a map all processes share,
 * while heapd's online GC runs cycles back to back, and checks that
 * nothing it can still reach was freed.
 *
 *   prog_gc_model --socket S --id W [--nproc N] [--ops N] [--seconds T]
 *                 [--seed X]
 *
 * Objects: class "gcm.Node" {next: ref, other: ref, tag: i64, rest: i64,
 * pay: bytes}. A chain of n nodes (1..4) built at step s has base tag
 * b = W << 40 | s << 8; node i has tag b + i, rest n - 1 - i and a payload
 * that its tag alone determines (payload_of: 1 + tag % 47 bytes, byte j =
 * (tag % 251 + 37 j) mod 256, a bytes object of its own), and the last
 * node's next is 0, so any reader can check a chain it reaches for being
 * whole. tests/gc_model runs peers of the other languages on the same
 * protocol (same class, map, keys and operations) beside these.
 *
 * The map is the root "gcm.map" (string keys). Process W's keys are
 * "w<W>.k<K>"; only W puts or removes them, each put replacing (never
 * freeing) the chain there, which becomes garbage unless something else
 * holds it:
 *   - a pin: W pins some chains' heads (uh_pin) and forgets the key;
 *   - a re-link: W sets the `other` field of one of its heads to the head
 *     of any process's key.
 * Every few operations W checks, outside any block, every chain it pins
 * and every chain under its own keys (content exactly as it built them),
 * and one hop along `other` (a whole chain): a freed object there
 * (UH_EFREED) or a wrong tag means the GC took something live.
 * Reads of other processes' keys run in read-only blocks: their chains
 * may be replaced and collected meanwhile, which a block sees as a
 * conflict and runs again.
 *
 * It stops after N operations or T seconds, whichever comes first.
 * Exit 0 when done (prints its counters), 1 on an unexpected error (heap
 * full included), 2 when something live was found freed or torn.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define NKEYS 64
#define TRIES 1000	/* a block's tries: tests/gc_model/test_languages.py, "Tries" */
#define NHELD 32
#define NPROC_MAX 8

enum { F_NEXT, F_OTHER, F_TAG, F_REST, F_PAY };

#define PAY_MAX 47

struct chain {
	int64_t base;		/* 0: none */
	int n;
};

struct held {
	uint32_t pin;
	uh_off head;
	struct chain c;		/* c.base 0: slot unused */
};

static uh_heap *h;
static uh_off map;
static uint32_t node_cls;
static int me, nproc = 3;
static uint64_t rng;
static struct chain own[NKEYS];
static struct held held[NHELD];
static long n_build, n_pin, n_relink, n_remove, n_verify, n_conflict_reads;

static uint64_t rnd(void)
{
	return th_xorshift64(&rng);
}

static void die(int code, const char *what, int rc)
{
	fprintf(stderr, "prog_gc_model %d: %s: %s: %s\n", me, what, uh_strerror(rc),
		uh_errmsg());
	exit(code);
}

static uh_key key_of(char *buf, size_t len, int w, int k)
{
	int n = snprintf(buf, len, "w%d.k%d", w, k);
	return (uh_key){ .kind = UH_KEY_STRING, .data = buf, .len = (size_t)n };
}

/* ---- building ---- */

/* The payload of the node tagged tag, into buf[PAY_MAX]; its length. */
static size_t payload_of(int64_t tag, unsigned char *buf)
{
	size_t n = 1 + (size_t)(tag % PAY_MAX);
	for (size_t j = 0; j < n; j++)	/* bound: PAY_MAX */
		buf[j] = (unsigned char)((tag % 251 + 37 * (int64_t)j) % 256);
	return n;
}

struct build_arg {
	int k;
	struct chain c;
};

static int build_fn(uh_heap *hh, void *p)
{
	struct build_arg *a = p;
	uh_off next = 0, node, pay;
	unsigned char pb[PAY_MAX];
	char kb[32];
	int rc;

	for (int i = a->c.n - 1; i >= 0; i--) {	/* bound: n <= 4 */
		size_t pn = payload_of(a->c.base + i, pb);
		if ((rc = uh_alloc(hh, node_cls, &node)) != 0 ||
		    (rc = uh_bytes_new(hh, pb, pn, &pay)) != 0 ||
		    (rc = uh_set_ref(hh, node, F_PAY, pay)) != 0 ||
		    (rc = uh_set_ref(hh, node, F_NEXT, next)) != 0 ||
		    (rc = uh_set_i64(hh, node, F_TAG, a->c.base + i)) != 0 ||
		    (rc = uh_set_i64(hh, node, F_REST, a->c.n - 1 - i)) != 0)
			return rc;
		next = node;
	}
	uh_key key = key_of(kb, sizeof(kb), me, a->k);
	uh_value v = { .type = UH_T_REF, .u.ref = next };
	return uh_map_put(hh, map, &key, &v, 0);
}

static void build(long step)
{
	struct build_arg a = { (int)(rnd() % NKEYS),
			       { (int64_t)me << 40 | (int64_t)step << 8, 1 + (int)(rnd() % 4) } };
	int rc = uh_run(h, build_fn, &a, TRIES);
	if (rc)
		die(1, "build", rc);
	own[a.k] = a.c;
	n_build++;
}

/* ---- checking a chain ---- */

#define TORN 1	/* not a UH_E* code: those are negative */

/* 0 if the node's payload is the one its tag determines; else the code
 * of the read that failed, or TORN. The bytes are read in place, so a
 * mismatch is looked at again after a check that the object still lives:
 * a freed payload answers UH_EFREED, a live wrong one TORN. */
static int check_payload(uh_off node, int64_t tag)
{
	unsigned char want[PAY_MAX];
	size_t n = payload_of(tag, want), len;
	const void *data;
	uh_off pay;
	int rc;

	if ((rc = uh_get_ref(h, node, F_PAY, &pay)) != 0)
		return rc;
	if (!pay)
		return TORN;
	if ((rc = uh_bytes_get(h, pay, &data, &len)) != 0)
		return rc;
	if (len == n && memcmp(data, want, n) == 0)
		return 0;
	return (rc = uh_bytes_get(h, pay, &data, &len)) != 0 ? rc : TORN;
}

/* 0 if the chain at head is whole and, when want is given, the one it
 * names; else what is wrong: the code of the read that failed, or TORN
 * for a wrong tag, length or payload. */
static int check_chain(uh_off head, const struct chain *want, uh_off *other)
{
	int64_t tag, rest, base = 0;
	uh_off node = head, next;
	int rc;

	for (int i = 0; node; i++) {	/* bound: rest counts down */
		if ((rc = uh_get_i64(h, node, F_TAG, &tag)) != 0 ||
		    (rc = uh_get_i64(h, node, F_REST, &rest)) != 0 ||
		    (rc = uh_get_ref(h, node, F_NEXT, &next)) != 0)
			return rc;
		if (i == 0) {
			base = tag;
			if (other && (rc = uh_get_ref(h, node, F_OTHER, other)) != 0)
				return rc;
			if (want && (base != want->base || rest != want->n - 1))
				return TORN;
		}
		if (tag != base + i || (rest == 0) != (next == 0) || i > 4) {
			fprintf(stderr, "prog_gc_model %d: node %d of chain %#llx at %#llx: tag %#llx "
				"rest %lld next %#llx (first tag %#llx)\n", me, i,
				(unsigned long long)head, (unsigned long long)node,
				(unsigned long long)tag, (long long)rest, (unsigned long long)next,
				(unsigned long long)base);
			return TORN;
		}
		if ((rc = check_payload(node, tag)) != 0)
			return rc;
		node = next;
	}
	return 0;
}

static void verify_live(const char *what, uh_off head, const struct chain *want)
{
	uh_off other = 0;
	int rc = check_chain(head, want, &other);
	if (rc == 0 && other)
		rc = check_chain(other, NULL, NULL);
	if (rc == 0)
		return;
	fprintf(stderr, "prog_gc_model %d: %s chain at %#llx (base %#llx, %d nodes): %s\n", me,
		what, (unsigned long long)head, (unsigned long long)want->base, want->n,
		rc == TORN ? "torn or not the one built" : uh_strerror(rc));
	exit(2);
}

static void verify(void)
{
	char kb[32];

	for (int i = 0; i < NHELD; i++)	/* bound: NHELD */
		if (held[i].c.base)
			verify_live("pinned", held[i].head, &held[i].c);
	for (int k = 0; k < NKEYS; k++) {	/* bound: NKEYS */
		if (!own[k].base)
			continue;
		uh_key key = key_of(kb, sizeof(kb), me, k);
		uh_value v;
		int rc = uh_map_get(h, map, &key, &v);
		if (rc)
			die(1, "get own key", rc);
		verify_live("own key's", v.u.ref, &own[k]);
	}
	n_verify++;
}

/* ---- pins ---- */

static void unhold(int i)
{
	int rc = uh_unpin(h, held[i].pin);
	if (rc)
		die(1, "unpin", rc);
	held[i].c.base = 0;
}

static void hold(void)
{
	int k = (int)(rnd() % NKEYS), i = (int)(rnd() % NHELD);
	char kb[32];

	if (!own[k].base)
		return;
	uh_key key = key_of(kb, sizeof(kb), me, k);
	uh_value v;
	int rc = uh_map_get(h, map, &key, &v);
	if (rc)
		die(1, "get to pin", rc);
	if (held[i].c.base)
		unhold(i);
	if ((rc = uh_pin(h, v.u.ref, &held[i].pin)) != 0)
		die(2, "pin of a chain under an own key", rc);
	held[i].head = v.u.ref;
	held[i].c = own[k];
	n_pin++;
}

/* ---- re-linking and removing ---- */

struct relink_arg {
	int k, w2, k2;
};

static int relink_fn(uh_heap *hh, void *p)
{
	struct relink_arg *a = p;
	char kb[32], kb2[32];
	uh_key key = key_of(kb, sizeof(kb), me, a->k), key2 = key_of(kb2, sizeof(kb2), a->w2, a->k2);
	uh_value v, v2;
	int rc = uh_map_get(hh, map, &key, &v);

	if (rc)
		return rc;
	if ((rc = uh_map_get(hh, map, &key2, &v2)) == UH_ENOTFOUND)
		return 0;
	if (rc)
		return rc;
	return uh_set_ref(hh, v.u.ref, F_OTHER, v2.u.ref);
}

static void relink(void)
{
	struct relink_arg a = { (int)(rnd() % NKEYS), (int)(rnd() % nproc),
				(int)(rnd() % NKEYS) };
	if (!own[a.k].base)
		return;
	int rc = uh_run(h, relink_fn, &a, TRIES);
	if (rc)
		die(1, "relink", rc);
	n_relink++;
}

static void remove_key(void)
{
	int k = (int)(rnd() % NKEYS);
	char kb[32];

	if (!own[k].base)
		return;
	uh_key key = key_of(kb, sizeof(kb), me, k);
	int rc = uh_map_remove(h, map, &key, NULL, 0);
	if (rc)
		die(1, "remove", rc);
	own[k].base = 0;
	n_remove++;
}

/* Another process's chain, read whole in one read-only block. */
struct peek_arg {
	int w, k;
};

static int peek_fn(uh_heap *hh, void *p)
{
	struct peek_arg *a = p;
	char kb[32];
	uh_key key = key_of(kb, sizeof(kb), a->w, a->k);
	uh_value v;
	int rc = uh_map_get(hh, map, &key, &v);

	if (rc == UH_ENOTFOUND)
		return 0;
	if (rc)
		return rc;
	rc = check_chain(v.u.ref, NULL, NULL);
	return rc == TORN ? UH_EINTERNAL : rc;
}

static void peek(void)
{
	struct peek_arg a = { (int)(rnd() % nproc), (int)(rnd() % NKEYS) };
	int rc = uh_run(h, peek_fn, &a, TRIES);
	if (rc == UH_EINTERNAL)
		die(2, "a chain read in a block was torn", rc);
	if (rc == UH_ECONFLICT)
		n_conflict_reads++;
	else if (rc)
		die(1, "peek", rc);
}

/* ---- main ---- */

static void setup(const char *socket)
{
	static const uh_field_spec f[] = {
		{ "next", UH_T_REF, 0 }, { "other", UH_T_REF, 0 },
		{ "tag", UH_T_I64, 0 }, { "rest", UH_T_I64, 0 },
		{ "pay", UH_T_BYTES, 0 },
	};
	int rc;

	if ((rc = uh_connect(socket, 0, &h)) != 0)
		die(1, "connect", rc);
	if ((rc = uh_class_register(h, "gcm.Node", f, 5, &node_cls)) != 0)
		die(1, "register", rc);
	if ((rc = uh_root_get(h, "gcm.map", &map)) != 0)
		die(1, "root gcm.map", rc);
}

int main(int argc, char **argv)
{
	const char *socket = NULL;
	long ops = 10000;
	double seconds = 0;

	rng = 88172645463325252ull;
	for (int i = 1; i + 1 < argc; i += 2) {	/* bound: argc */
		if (!strcmp(argv[i], "--socket"))
			socket = argv[i + 1];
		else if (!strcmp(argv[i], "--id"))
			me = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--nproc"))
			nproc = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--ops"))
			ops = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--seconds"))
			seconds = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--seed"))
			rng ^= th_mix64(strtoull(argv[i + 1], NULL, 0));
	}
	if (!socket || nproc < 1 || nproc > NPROC_MAX) {
		fprintf(stderr, "usage: prog_gc_model --socket S --id W [--nproc N] "
			"[--ops N] [--seconds T] [--seed X]\n");
		return 1;
	}
	rng ^= th_mix64((uint64_t)me + 1);
	setup(socket);
	uint64_t stop_ms = seconds > 0 ? th_now_ms() + (uint64_t)(seconds * 1000) : 0;
	for (long step = 1; step <= ops; step++) {	/* bound: ops */
		if (stop_ms && step % 64 == 0 && th_now_ms() >= stop_ms)
			break;
		unsigned r = (unsigned)(rnd() % 100);
		if (r < 40)
			build(step);
		else if (r < 55)
			hold();
		else if (r < 62) {
			int i = (int)(rnd() % NHELD);
			if (held[i].c.base)
				unhold(i);
		} else if (r < 72)
			relink();
		else if (r < 80)
			remove_key();
		else if (r < 92)
			peek();
		else
			verify();
	}
	verify();
	uh_stats st;
	uh_stats_get(h, &st);
	printf("prog_gc_model %d: builds=%ld pins=%ld relinks=%ld removes=%ld verifies=%ld "
	       "peek_conflicts=%ld gc_cycles=%llu gc_greys=%llu\n", me, n_build, n_pin, n_relink,
	       n_remove, n_verify, n_conflict_reads, (unsigned long long)st.gc_cycles,
	       (unsigned long long)st.gc_greys);
	uh_disconnect(h);
	return 0;
}
