/*
 * test_dt_list.c -- persistent lists against an in-memory model.
 *
 * Property test: a long random sequence of append / insert / pop / set /
 * get (single operations, and groups of them in user blocks that commit or
 * abort), with values of every type (strings as fresh objects, refs to a
 * shared object), checked against the model after every step (length and
 * every element); heapd is restarted a few times mid-sequence and the
 * sequence continues on a new connection. Lists grow past several
 * capacities and shrink, so growth, in-place shifts and storage rebuilds
 * (shifts of more than 32 elements) are all exercised.
 * UH_FREE_OLD is checked to free exactly the popped/replaced string.
 *
 * Bad input: index out of range, wrong value types, references to freed
 * or made-up objects, NULL arguments, unknown flags, an object that is not
 * a list, a read-only handle: each gives its documented error with a
 * message, and the list is unchanged.
 *
 * Big lists (large-object storages): 200 pops at the front of a
 * 6000-element list in one session work (each rebuilds the storage; the
 * old one's region goes back to heapd, so the arena directory does not
 * fill up); a pop at the front of 20000 elements works the same way.
 *
 * UH_TEST_SEED=n replays a run.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

static const char *SUITE = "test_dt_list";
static struct th_heapd d;

enum { MAXN = 4096, STEPS = 8000, RESTART_EVERY = 2000 };

/* One element of the model: for strings the text, the object in ref. */
struct elem {
	uh_value v;
	char s[24];
};

static struct elem model[MAXN];
static uint64_t n;
static uh_off list, shared;	/* shared: target of every REF element */
static uint64_t rng;
static uint64_t nstr;		/* strings made (unique text) */
static uint64_t target;		/* length the sequence drifts to */

static uint64_t rnd(void)
{
	return th_xorshift64(&rng);
}

static int same(uh_heap *h, const struct elem *e, const uh_value *v)
{
	if (v->type != e->v.type)
		return 0;
	if (v->type == UH_T_F64 || v->type == UH_T_F32)
		return v->u.f == e->v.u.f;
	if (v->u.i != e->v.u.i)
		return 0;
	if (v->type != UH_T_STRING)
		return 1;
	const char *s;
	size_t len;
	return uh_string_get(h, v->u.ref, &s, &len) == 0 && len == strlen(e->s) &&
	       memcmp(s, e->s, len) == 0;
}

/* The whole list equals the model. Returns 1 if so. */
static int check_all(uh_heap *h, const char *when, long step)
{
	uint64_t len = 0;
	int rc = uh_list_len(h, list, &len);

	if (rc != 0 || len != n) {
		th_fail(__FILE__, __LINE__, "%s step %ld: len rc %d, %llu != model %llu (%s)",
			when, step, rc, (unsigned long long)len, (unsigned long long)n,
			uh_errmsg());
		return 0;
	}
	for (uint64_t i = 0; i < n; i++) {
		uh_value v;
		rc = uh_list_get(h, list, i, &v);
		if (rc != 0 || !same(h, &model[i], &v)) {
			th_fail(__FILE__, __LINE__, "%s step %ld: element %llu: rc %d type %u "
				"value %lld, model type %u value %lld", when, step,
				(unsigned long long)i, rc, v.type, (long long)v.u.i,
				model[i].v.type, (long long)model[i].v.u.i);
			return 0;
		}
	}
	th_passed++;
	return 1;
}

/* A random value (strings are new objects, made in the current block). */
static int make_value(uh_heap *h, struct elem *e)
{
	memset(e, 0, sizeof(*e));
	switch (rnd() % 8) {
	case 0: e->v.type = UH_T_BOOL; e->v.u.i = (int64_t)(rnd() & 1); break;
	case 1: e->v.type = UH_T_I8; e->v.u.i = (int8_t)rnd(); break;
	case 2: e->v.type = UH_T_I32; e->v.u.i = (int32_t)rnd(); break;
	case 3: e->v.type = UH_T_F64; e->v.u.f = (double)(int64_t)rnd() / 7.0; break;
	case 4: e->v.type = UH_T_F32; e->v.u.f = (float)((double)(int32_t)rnd() / 3.0); break;
	case 5: e->v.type = UH_T_REF; e->v.u.ref = shared; break;
	case 6: case 7: {
		e->v.type = UH_T_STRING;
		snprintf(e->s, sizeof(e->s), "str%llu", (unsigned long long)nstr++);
		return uh_string_new(h, e->s, strlen(e->s), &e->v.u.ref);
	}
	}
	if (e->v.type == UH_T_F32 || e->v.type == UH_T_F64)
		return 0;
	if (rnd() % 4 == 0) {	/* integers also as i64 */
		e->v.type = e->v.type == UH_T_REF ? UH_T_REF : UH_T_I64;
	}
	return 0;
}

static int freed(uh_heap *h, uh_off o)
{
	uint32_t cls;
	return uh_obj_class(h, o, &cls) == UH_EFREED;
}

/* One random operation on heap and model. Inside a block (in_block) the
 * frees it checks are only due at commit. Returns 0 or the error. */
static int one_op(uh_heap *h, int in_block)
{
	struct elem e;
	uh_value got;
	uint64_t op = rnd() % 100, i;
	int rc;

	/* Drift the length towards a target that moves now and then. */
	int grow = n < target;
	uint64_t add = grow ? 60 : 20, pop = 70;
	if (op < add * 2 / 3) {		/* append */
		if ((rc = make_value(h, &e)) != 0 || (rc = uh_list_append(h, list, &e.v)) != 0)
			return rc;
		model[n++] = e;
	} else if (op < add) {		/* insert */
		i = rnd() % (n + 1);
		if ((rc = make_value(h, &e)) != 0 || (rc = uh_list_insert(h, list, i, &e.v)) != 0)
			return rc;
		memmove(&model[i + 1], &model[i], (n - i) * sizeof(model[0]));
		model[i] = e;
		n++;
	} else if (op < pop && n) {	/* pop */
		i = rnd() % 3 == 0 ? n - 1 : rnd() % n;
		int is_str = model[i].v.type == UH_T_STRING;
		uint32_t fl = is_str && rnd() % 2 ? UH_FREE_OLD : 0;
		if ((rc = uh_list_pop(h, list, i, &got, fl)) != 0)
			return rc;
		if (!same(h, &model[i], &got) && !(fl && got.u.ref == model[i].v.u.ref))
			th_fail(__FILE__, __LINE__, "pop %llu returned type %u %lld",
				(unsigned long long)i, got.type, (long long)got.u.i);
		if (fl && !in_block && !freed(h, got.u.ref))
			th_fail(__FILE__, __LINE__, "pop with UH_FREE_OLD left the string");
		memmove(&model[i], &model[i + 1], (n - i - 1) * sizeof(model[0]));
		n--;
	} else if (op < 90 && n) {	/* set */
		i = rnd() % n;
		uh_off old = model[i].v.type == UH_T_STRING ? model[i].v.u.ref : 0;
		uint32_t fl = old && rnd() % 2 ? UH_FREE_OLD : 0;
		if ((rc = make_value(h, &e)) != 0 || (rc = uh_list_set(h, list, i, &e.v, fl)) != 0)
			return rc;
		if (fl && !in_block && !freed(h, old))
			th_fail(__FILE__, __LINE__, "set with UH_FREE_OLD left the string");
		model[i] = e;
	} else if (n) {			/* get */
		i = rnd() % n;
		if ((rc = uh_list_get(h, list, i, &got)) != 0)
			return rc;
		if (!same(h, &model[i], &got))
			th_fail(__FILE__, __LINE__, "get %llu differs", (unsigned long long)i);
	}
	return 0;
}

static struct elem saved[MAXN];

/* A few operations in one user block that commits or aborts. */
static void block_op(uh_heap *h, long step)
{
	uint64_t saved_n = n;
	int commit = rnd() % 3 != 0, rc = 0;

	memcpy(saved, model, n * sizeof(model[0]));
	TH_CHECK_RC(uh_begin(h));
	int k = 2 + (int)(rnd() % 4);
	for (int j = 0; j < k && rc == 0; j++)
		rc = one_op(h, 1);
	if (rc != 0)
		th_fail(__FILE__, __LINE__, "step %ld: op in block: %s: %s", step,
			uh_strerror(rc), uh_errmsg());
	if (commit && rc == 0) {
		TH_CHECK_RC(uh_commit(h));
		return;
	}
	TH_CHECK_RC(uh_abort(h));
	n = saved_n;
	memcpy(model, saved, n * sizeof(model[0]));
}

static void reconnect(uh_heap **h, int restart)
{
	uh_disconnect(*h);
	*h = NULL;
	if (restart)
		TH_CHECK_EQ(th_heapd_restart(&d), 0);
	if (th_connect(&d, 0, h) != 0)
		exit(th_summary(SUITE));
	TH_CHECK_RC(uh_root_get(*h, "dt_list.model", &list));
	TH_CHECK_RC(uh_root_get(*h, "dt_list.shared", &shared));
}

static void test_model(uh_heap **h)
{
	uint64_t max_n = 0;
	int ok = 1;

	TH_CHECK_RC(uh_list_new(*h, &list));
	TH_CHECK_RC(uh_string_new(*h, "shared", 6, &shared));
	TH_CHECK_RC(uh_root_set(*h, "dt_list.model", list));
	TH_CHECK_RC(uh_root_set(*h, "dt_list.shared", shared));
	check_all(*h, "empty", 0);
	for (long step = 1; step <= STEPS && ok; step++) {
		if (step % 400 == 1)
			target = rnd() % 1600;
		if (rnd() % 10 == 0) {
			block_op(*h, step);
		} else {
			int rc = one_op(*h, 0);
			if (rc != 0)
				th_fail(__FILE__, __LINE__, "step %ld: %s: %s", step,
					uh_strerror(rc), uh_errmsg());
		}
		ok = check_all(*h, "model", step);
		if (n > max_n)
			max_n = n;
		if (step % RESTART_EVERY == 0) {
			reconnect(h, 1);
			ok = ok && check_all(*h, "after restart", step);
		}
	}
	printf("model: %d steps, longest list %llu, final length %llu\n", STEPS,
	       (unsigned long long)max_n, (unsigned long long)n);
	TH_CHECK(max_n > 300);
}

/* ---- bad input ---- */

static void bad_value(uh_heap *h, const uh_value *v, int want)
{
	TH_CHECK_ERR(uh_list_append(h, list, v), want);
	TH_CHECK(uh_errmsg()[0] != '\0');
	TH_CHECK_ERR(uh_list_insert(h, list, 0, v), want);
	if (n)
		TH_CHECK_ERR(uh_list_set(h, list, 0, v, 0), want);
}

static void test_bad(uh_heap *h)
{
	uh_value v = { .type = UH_T_I64 }, got;
	uh_off f, arr;
	uint64_t len;

	/* a short list of known content */
	while (n > 5)
		TH_CHECK_RC(uh_list_pop(h, list, --n, NULL, 0));
	check_all(h, "bad: start", 0);
	TH_CHECK_ERR(uh_list_get(h, list, n, &got), UH_ERANGE);
	TH_CHECK(strstr(uh_errmsg(), "out of range") != NULL);
	TH_CHECK_ERR(uh_list_set(h, list, n, &v, 0), UH_ERANGE);
	TH_CHECK_ERR(uh_list_pop(h, list, n, &got, 0), UH_ERANGE);
	TH_CHECK_ERR(uh_list_insert(h, list, n + 1, &v), UH_ERANGE);
	TH_CHECK_ERR(uh_list_insert(h, list, UINT64_MAX, &v), UH_ERANGE);
	TH_CHECK_ERR(uh_list_pop(h, list, UINT64_MAX, &got, 0), UH_ERANGE);
	v.type = 0;
	bad_value(h, &v, UH_ETYPE);
	v.type = 42;
	bad_value(h, &v, UH_ETYPE);
	v.type = UH_T_I8;
	v.u.i = 300;
	bad_value(h, &v, UH_ERANGE);
	v.type = UH_T_BOOL;
	v.u.i = 2;
	bad_value(h, &v, UH_ERANGE);
	TH_CHECK_RC(uh_string_new(h, "gone", 4, &f));
	TH_CHECK_RC(uh_free(h, f));
	v.type = UH_T_STRING;
	v.u.ref = f;
	bad_value(h, &v, UH_EFREED);
	v.u.ref = shared + 8;
	bad_value(h, &v, UH_EFREED);
	TH_CHECK_RC(uh_array_new(h, UH_T_I8, 2, &arr));
	v.u.ref = arr;		/* a string value must name a string */
	bad_value(h, &v, UH_ETYPE);
	v.type = UH_T_BYTES;
	v.u.ref = shared;
	bad_value(h, &v, UH_ETYPE);
	v.type = UH_T_I64;
	TH_CHECK_ERR(uh_list_append(h, list, NULL), UH_EINVAL);
	TH_CHECK_ERR(uh_list_set(h, list, 0, &v, 0x10), UH_EINVAL);
	TH_CHECK_ERR(uh_list_pop(h, list, 0, &got, 0x10), UH_EINVAL);
	TH_CHECK_ERR(uh_list_get(h, list, 0, NULL), UH_EINVAL);
	TH_CHECK_ERR(uh_list_len(h, list, NULL), UH_EINVAL);
	TH_CHECK_ERR(uh_list_new(h, NULL), UH_EINVAL);
	/* not a list */
	TH_CHECK_ERR(uh_list_len(h, arr, &len), UH_ETYPE);
	TH_CHECK_ERR(uh_list_append(h, shared, &v), UH_ETYPE);
	TH_CHECK_ERR(uh_list_get(h, 0, 0, &got), UH_EFREED);
	TH_CHECK_ERR(uh_list_pop(h, list + 16, 0, &got, 0), UH_EFREED);
	/* a failed op inside a user block dooms nothing else... */
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_ERR(uh_list_get(h, list, n, &got), UH_ERANGE);
	TH_CHECK_RC(uh_commit(h));
	check_all(h, "bad: after errors", 0);
	/* empty list */
	uh_off e;
	TH_CHECK_RC(uh_list_new(h, &e));
	TH_CHECK_RC(uh_list_len(h, e, &len));
	TH_CHECK_EQ(len, 0);
	TH_CHECK_ERR(uh_list_pop(h, e, 0, &got, 0), UH_ERANGE);
	TH_CHECK_ERR(uh_list_get(h, e, 0, &got), UH_ERANGE);
	TH_CHECK_RC(uh_list_insert(h, e, 0, &v));	/* index == len appends */
	TH_CHECK_RC(uh_list_len(h, e, &len));
	TH_CHECK_EQ(len, 1);
	TH_CHECK_RC(uh_free(h, e));
	TH_CHECK_RC(uh_free(h, arr));

	/* read-only handle reads but does not write */
	uh_heap *ro = NULL;
	if (th_connect(&d, UH_READONLY, &ro) == 0) {
		check_all(ro, "read-only", 0);
		TH_CHECK_ERR(uh_list_append(ro, list, &v), UH_EREADONLY);
		TH_CHECK_ERR(uh_list_pop(ro, list, 0, NULL, 0), UH_EREADONLY);
		TH_CHECK_ERR(uh_list_new(ro, &e), UH_EREADONLY);
		TH_CHECK_RC(uh_begin(ro));
		check_all(ro, "read-only block", 0);
		TH_CHECK_RC(uh_commit(ro));
		uh_disconnect(ro);
	}
	check_all(h, "bad: end", 0);
}

static int fill(uh_heap *h, uh_off l, int64_t count)
{
	uh_value v = { .type = UH_T_I64 };
	int rc = uh_begin(h);

	for (int64_t i = 0; i < count && rc == 0; i++) {
		v.u.i = i;
		rc = uh_list_append(h, l, &v);
	}
	if (rc) {
		uh_abort(h);
		return rc;
	}
	return uh_commit(h);
}

static void test_big(uh_heap *h)
{
	uh_off l;
	uh_value v;
	uint64_t len = 0;
	int bad = 0;

	TH_CHECK_RC(uh_list_new(h, &l));
	TH_CHECK_RC(fill(h, l, 6000));
	for (int64_t i = 0; i < 200; i++)
		if (uh_list_pop(h, l, 0, &v, 0) != 0 || v.u.i != i)
			bad++;
	TH_CHECK_EQ(bad, 0);
	for (int64_t i = 0; i < 50; i++) {
		v.type = UH_T_I64;
		v.u.i = -i;
		if (uh_list_insert(h, l, 1, &v) != 0)
			bad++;
	}
	TH_CHECK_EQ(bad, 0);
	TH_CHECK_RC(uh_list_len(h, l, &len));
	TH_CHECK_EQ(len, 5850);
	TH_CHECK_RC(uh_list_get(h, l, 1, &v));
	TH_CHECK_EQ(v.u.i, -49);
	TH_CHECK_RC(uh_list_get(h, l, 5849, &v));
	TH_CHECK_EQ(v.u.i, 5999);
	TH_CHECK_RC(uh_free(h, l));

	TH_CHECK_RC(uh_list_new(h, &l));
	TH_CHECK_RC(fill(h, l, 20000));
	TH_CHECK_RC(uh_list_pop(h, l, 0, &v, 0));	/* a large storage, rebuilt */
	TH_CHECK_EQ(v.u.i, 0);
	TH_CHECK_RC(uh_list_len(h, l, &len));
	TH_CHECK_EQ(len, 19999);
	TH_CHECK_RC(uh_list_get(h, l, 0, &v));
	TH_CHECK_EQ(v.u.i, 1);
	TH_CHECK_RC(uh_list_pop(h, l, 19989, &v, 0));	/* near the end: shifted */
	TH_CHECK_EQ(v.u.i, 19990);
	TH_CHECK_RC(uh_free(h, l));
}

int main(void)
{
	uh_heap *h = NULL;
	const char *s = getenv("UH_TEST_SEED");

	rng = s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL) * 2654435761u;
	if (!rng)
		rng = 1;
	printf("%s: seed %llu (UH_TEST_SEED to replay)\n", SUITE, (unsigned long long)rng);
	if (th_heapd_start(&d, NULL) != 0 || th_connect(&d, 0, &h) != 0) {
		th_fail(__FILE__, __LINE__, "heapd start/connect");
		return th_summary(SUITE);
	}
	test_model(&h);
	test_bad(h);
	test_big(h);
	uh_disconnect(h);
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
