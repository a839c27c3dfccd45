/*
 * prog_dt_map_mp.c -- one process of test_dt_map_mp: random puts and
 * removes on its own keys of the shared string-keyed map under root
 * "dt_map.mp", while iterating the whole map now and then.
 *
 *   prog_dt_map_mp --socket S --id W --ops N --dir D
 *
 * Keys of process W: "w<W>.k<K>" (K < NKEYS), and pairs "w<W>.a<P>" /
 * "w<W>.b<P>" (P < NPAIRS) that are always put or removed together, in
 * one uh_run block, with the same value. Values are I64: (id << 32) | seq,
 * id = W * 1000 + K for a key, 500000 + W * 1000 + P for both keys of a
 * pair, so a reader can tell an entry whose value is not its key's.
 *
 * Log D/ack.W (one write(2) per line on O_APPEND: survives SIGKILL):
 * "I P <key> <value>" or "I R <key>" before an operation (pairs: key
 * "a<P>"/"b<P>" stands for both), "A" once it returned. So the test knows
 * every acknowledged operation and the one in flight.
 *
 * Readers: every 150 operations a whole iteration outside a block (each
 * uh_map_next its own snapshot: entries may repeat or be missed, but
 * each must be a well-formed entry, and for this process's own keys
 * exactly what it last wrote); every 400 operations a whole iteration in
 * one read-only uh_run block (a snapshot: no entry twice, count equal to
 * uh_map_len, pairs of every process complete, own keys exactly the
 * model). The block may lose to writers every try: that is counted, not
 * an error.
 *
 * After connecting it creates D/ready.W and waits for D/go.
 * Exit 0 when done (prints its counters), 1 on an unexpected error, 2 when
 * a reader saw something wrong (printed).
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define NKEYS 300
#define NPAIRS 20
#define NPROC 3

static uh_heap *h;
static uh_off map;
static int me, ack_fd;
static uint64_t rng;
static int64_t own[NKEYS];		/* model of my keys: value, 0 = absent */
static int64_t own_pair[NPAIRS];
static long iters_out, iters_in, iters_in_lost;

static uint64_t rnd(void)
{
	return th_xorshift64(&rng);
}

static void die(int code, const char *what, int rc)
{
	fprintf(stderr, "prog_dt_map_mp %d: %s: %s: %s\n", me, what, uh_strerror(rc),
		uh_errmsg());
	exit(code);
}

static void logline(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logline(const char *fmt, ...)
{
	char line[TH_RECORD_LEN];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > 0 && line[n - 1] == '\n')
		line[n - 1] = '\0';
	th_record_append(ack_fd, line);	/* never torn by a SIGKILL */
}

static uh_key skey(char *buf, size_t len, int w, char kind, int k)
{
	uh_key key = { .kind = UH_KEY_STRING };
	key.len = (size_t)snprintf(buf, len, "w%d.%c%d", w, kind, k);
	key.data = buf;
	return key;
}

/* ---- writers ---- */

struct pair_op {
	int p;
	int64_t val;	/* 0: remove both */
};

static int pair_body(uh_heap *hh, void *arg)
{
	const struct pair_op *op = arg;
	uh_value v = { .type = UH_T_I64, .u.i = op->val };
	char buf[32];
	int rc = 0;

	for (int half = 0; half < 2 && rc == 0; half++) {
		uh_key k = skey(buf, sizeof(buf), me, half ? 'b' : 'a', op->p);
		if (op->val)
			rc = uh_map_put(hh, map, &k, &v, 0);
		else if ((rc = uh_map_remove(hh, map, &k, NULL, 0)) == UH_ENOTFOUND)
			rc = 0;
	}
	return rc;
}

static void one_op(uint64_t seq)
{
	char buf[32];

	if (rnd() % 5 == 0) {
		struct pair_op op = { (int)(rnd() % NPAIRS), 0 };
		if (rnd() % 3)
			op.val = (int64_t)(((uint64_t)(500000 + me * 1000 + op.p) << 32) | seq);
		logline("I %c a%d %lld\n", op.val ? 'P' : 'R', op.p, (long long)op.val);
		int rc = uh_run(h, pair_body, &op, 0);
		if (rc)
			die(1, "pair", rc);
		logline("A\n");
		own_pair[op.p] = op.val;
		return;
	}
	int k = (int)(rnd() % NKEYS);
	uh_key key = skey(buf, sizeof(buf), me, 'k', k);
	if (rnd() % 3) {
		uh_value v = { .type = UH_T_I64 };
		v.u.i = (int64_t)(((uint64_t)(me * 1000 + k) << 32) | seq);
		logline("I P k%d %lld\n", k, (long long)v.u.i);
		int rc = uh_map_put(h, map, &key, &v, 0);	/* re-run on conflicts inside */
		if (rc)
			die(1, "put", rc);
		logline("A\n");
		own[k] = v.u.i;
	} else {
		uh_value old;
		logline("I R k%d 0\n", k);
		int rc = uh_map_remove(h, map, &key, &old, 0);
		if (rc == 0 ? !own[k] || old.u.i != own[k] : rc != UH_ENOTFOUND || own[k]) {
			fprintf(stderr, "prog_dt_map_mp %d: remove k%d: rc %d, old %lld, model %lld\n",
				me, k, rc, (long long)old.u.i, (long long)own[k]);
			exit(2);
		}
		logline("A\n");
		own[k] = 0;
	}
}

/* ---- readers ---- */

/* What an entry says about itself; -1 if malformed. */
struct parsed {
	int w, k;
	char kind;
};

static int parse(const uh_key *k, const uh_value *v, struct parsed *p)
{
	char buf[40];
	int n = 0;

	if (k->kind != UH_KEY_STRING || k->len >= sizeof(buf) || v->type != UH_T_I64)
		return -1;
	memcpy(buf, k->data, k->len);
	buf[k->len] = 0;
	if (sscanf(buf, "w%d.%c%d%n", &p->w, &p->kind, &p->k, &n) != 3 || (size_t)n != k->len ||
	    p->w < 0 || p->w >= NPROC || p->k < 0)
		return -1;
	int64_t id = p->kind == 'k' ? p->w * 1000 + p->k : 500000 + p->w * 1000 + p->k;
	if ((p->kind == 'k' && p->k >= NKEYS) || (p->kind != 'k' && p->k >= NPAIRS) ||
	    (p->kind != 'k' && p->kind != 'a' && p->kind != 'b'))
		return -1;
	return (int64_t)((uint64_t)v->u.i >> 32) == id ? 0 : -1;
}

static void reader_fail(const char *what, const uh_key *k, const uh_value *v)
{
	fprintf(stderr, "prog_dt_map_mp %d: %s: key '%.*s' value %lld\n", me, what,
		k ? (int)k->len : 0, k ? (const char *)k->data : "", v ? (long long)v->u.i : 0);
	exit(2);
}

/* The value this process wrote last to one of its own keys (0: absent). */
static int64_t own_value(const struct parsed *p)
{
	return p->kind == 'k' ? own[p->k] : own_pair[p->k];
}

static void iterate_outside(void)
{
	uh_iter it;
	uh_key k;
	uh_value v;
	struct parsed p;
	int rc;
	long n = 0;

	memset(&it, 0, sizeof(it));
	while ((rc = uh_map_next(h, map, &it, &k, &v)) == 0) {
		if (++n > 20 * NPROC * (NKEYS + 2 * NPAIRS))
			reader_fail("iteration outside a block does not end", NULL, NULL);
		if (parse(&k, &v, &p) != 0)
			reader_fail("malformed entry (outside a block)", &k, &v);
		if (p.w == me && own_value(&p) != v.u.i)
			reader_fail("own key not as last written (outside a block)", &k, &v);
	}
	if (rc != UH_ENOTFOUND)
		die(1, "uh_map_next outside a block", rc);
	iters_out++;
}

struct snap {
	unsigned char seen[NPROC][3][NKEYS];
	int64_t pair_val[NPROC][2][NPAIRS];
	long n;
	const char *bad;
	uh_key bad_k;
	uh_value bad_v;
};

static int snap_body(uh_heap *hh, void *arg)
{
	struct snap *s = arg;
	uh_iter it;
	uh_key k;
	uh_value v;
	struct parsed p;
	uint64_t len;
	int rc;

	memset(s, 0, sizeof(*s));
	memset(&it, 0, sizeof(it));
	while ((rc = uh_map_next(hh, map, &it, &k, &v)) == 0) {
		s->bad_k = k;
		s->bad_v = v;
		if (parse(&k, &v, &p) != 0) {
			s->bad = "malformed entry (in a block)";
			return 0;
		}
		int kind = p.kind == 'k' ? 0 : p.kind == 'a' ? 1 : 2;
		if (s->seen[p.w][kind][p.k]++) {
			s->bad = "entry returned twice in one block";
			return 0;
		}
		if (kind)
			s->pair_val[p.w][kind - 1][p.k] = v.u.i;
		if (p.w == me && own_value(&p) != v.u.i) {
			s->bad = "own key not as last written (in a block)";
			return 0;
		}
		s->n++;
	}
	if (rc != UH_ENOTFOUND)
		return rc;
	if ((rc = uh_map_len(hh, map, &len)) != 0)
		return rc;
	if ((long)len != s->n)
		s->bad = "iteration count differs from uh_map_len in one block";
	for (int w = 0; w < NPROC; w++)
		for (int q = 0; q < NPAIRS; q++)
			if (s->pair_val[w][0][q] != s->pair_val[w][1][q])
				s->bad = "a pair is half written";
	for (int q = 0; q < NKEYS && !s->bad; q++)
		if (!own[q] != !s->seen[me][0][q])
			s->bad = "own key missing from a snapshot";
	return 0;
}

static void iterate_in_block(void)
{
	static struct snap s;
	int rc = uh_run(h, snap_body, &s, 20);

	if (rc == UH_ECONFLICT) {
		iters_in_lost++;
		return;
	}
	if (rc)
		die(1, "iteration in a block", rc);
	if (s.bad)
		reader_fail(s.bad, &s.bad_k, &s.bad_v);
	iters_in++;
}

int main(int argc, char **argv)
{
	const char *sock = NULL, *dir = NULL;
	long ops = 0;
	char path[700], name[32];

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--socket"))
			sock = argv[i + 1];
		else if (!strcmp(argv[i], "--id"))
			me = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--ops"))
			ops = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--dir"))
			dir = argv[i + 1];
	}
	if (!sock || !dir || me < 0 || me >= NPROC) {
		fprintf(stderr, "usage: prog_dt_map_mp --socket S --id W --ops N --dir D\n");
		return 1;
	}
	rng = 0x9E3779B97F4A7C15ull * (uint64_t)(me + 1) ^ (uint64_t)getpid();
	snprintf(path, sizeof(path), "%s/ack.%d", dir, me);
	ack_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_TRUNC, 0600);
	if (ack_fd < 0)
		die(1, "open ack file", 0);
	int rc = uh_connect(sock, 0, &h);
	if (rc || (rc = uh_root_get(h, "dt_map.mp", &map)) != 0)
		die(1, "connect", rc);
	snprintf(name, sizeof(name), "ready.%d", me);
	th_signal_file(dir, name, NULL);
	if (th_wait_file(dir, "go", 20000) != 0)
		die(1, "no go file", 0);
	for (long i = 1; i <= ops; i++) {
		one_op((uint64_t)i);
		if (i % 150 == 0)
			iterate_outside();
		if (i % 400 == 0)
			iterate_in_block();
	}
	uh_stats st;
	uh_stats_get(h, &st);
	printf("worker %d: ops=%ld iters_outside=%ld iters_in_block=%ld lost=%ld "
	       "conflicts=%llu retries=%llu lock_waits=%llu\n", me, ops, iters_out, iters_in,
	       iters_in_lost, (unsigned long long)st.conflicts, (unsigned long long)st.retries,
	       (unsigned long long)st.lock_waits);
	uh_disconnect(h);
	return 0;
}
