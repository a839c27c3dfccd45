/*
 * test_generations.c -- a reference names one object, never its slot's
 * next one (format 2, FORMAT.md 4 and 6.3):
 *  - references carry a generation; the header word is class | gen << 16;
 *  - a stale reference of the same class fails UH_EFREED on every use
 *    after the slot was reused, in and outside blocks, while the new
 *    object's own reference works;
 *  - a rolled-back allocation still moves the slot's generation on;
 *  - a large object's region, freed by heapd and handed out again, never
 *    restarts at the generation an old reference carries;
 *  - a dangling reference stored in the heap (to a reused slot) is nulled
 *    by recovery GC and reported by uh_heap_check.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "harness.h"

static const char *SUITE = "test_generations";

/* 1000 payload bytes: a 1024-byte size class, ~1000 slots per arena,
 * so the allocator comes round to a freed slot quickly. */
#define BIG_FIELDS 125
static uint32_t big_cls, holder_cls;

static void setup(uh_heap *h)
{
	static uh_field_spec f[BIG_FIELDS];
	static char names[BIG_FIELDS][8];
	static const uh_field_spec holder[] = { { "ref", UH_T_REF, 0 } };

	for (int i = 0; i < BIG_FIELDS; i++) {
		snprintf(names[i], sizeof(names[i]), "f%d", i);
		f[i] = (uh_field_spec){ names[i], UH_T_I64, 0 };
	}
	TH_CHECK_RC(uh_class_register(h, "GenBig", f, BIG_FIELDS, &big_cls));
	TH_CHECK_RC(uh_class_register(h, "GenHolder", holder, 1, &holder_cls));
}

/* Allocate (and free again) until the allocator hands out the slot of
 * old; returns the new object there (of class big_cls), or 0. */
static uh_off realloc_slot(uh_heap *h, uh_off old)
{
	for (int i = 0; i < 100000; i++) {	/* bound: a few arenas' slots */
		uh_off o;
		if (uh_alloc(h, big_cls, &o) != 0)
			return 0;
		if (UH_REF_OFFSET(o) == UH_REF_OFFSET(old))
			return o;
		if (uh_free(h, o) != 0)
			return 0;
	}
	return 0;
}

static void test_word_and_ref(uh_heap *h)
{
	uh_off o;
	uint32_t cls;

	TH_CHECK_RC(uh_alloc(h, big_cls, &o));
	const struct uh_objhdr *oh = (const void *)((char *)uh_base(h) + UH_REF_OFFSET(o));
	TH_CHECK_EQ(oh->class_word, UH_OBJ_CLASS_WORD(big_cls, UH_REF_GEN(o)));
	TH_CHECK(oh->size & UH_OBJ_VALID);
	TH_CHECK_RC(uh_obj_class(h, o, &cls));
	TH_CHECK_EQ(cls, big_cls);
	/* the same offset with another generation names nothing */
	uh_off other = UH_REF_OFFSET(o) | (uint64_t)((UH_REF_GEN(o) + 1) & 0xffff) << 48;
	TH_CHECK_ERR(uh_obj_class(h, other, &cls), UH_EFREED);
	TH_CHECK_RC(uh_free(h, o));
}

static void test_stale_same_class(uh_heap *h)
{
	uh_off a, b;
	int64_t v;

	TH_CHECK_RC(uh_alloc(h, big_cls, &a));
	TH_CHECK_RC(uh_set_i64(h, a, 0, 111));
	TH_CHECK_RC(uh_free(h, a));
	b = realloc_slot(h, a);
	TH_CHECK(b != 0);
	if (!b)
		return;
	printf("slot %llu reused: generation %u -> %u\n", (unsigned long long)UH_REF_OFFSET(a),
	       UH_REF_GEN(a), UH_REF_GEN(b));
	TH_CHECK(UH_REF_GEN(b) == ((UH_REF_GEN(a) + 1) & 0xffff));
	TH_CHECK_RC(uh_set_i64(h, b, 0, 222));
	/* every use of the stale reference fails, none reaches b */
	TH_CHECK_ERR(uh_get_i64(h, a, 0, &v), UH_EFREED);
	TH_CHECK(strstr(uh_errmsg(), "generation") != NULL);
	TH_CHECK_ERR(uh_set_i64(h, a, 0, 333), UH_EFREED);
	TH_CHECK_ERR(uh_read(h, a, 16, &v, 8), UH_EFREED);
	TH_CHECK_ERR(uh_free(h, a), UH_EFREED);
	TH_CHECK_ERR(uh_root_set(h, "gen.stale", a), UH_EFREED);
	uh_off hold;
	TH_CHECK_RC(uh_alloc(h, holder_cls, &hold));
	TH_CHECK_ERR(uh_set_ref(h, hold, 0, a), UH_EFREED);
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_ERR(uh_get_i64(h, a, 0, &v), UH_EFREED);
	TH_CHECK_RC(uh_abort(h));
	TH_CHECK_RC(uh_get_i64(h, b, 0, &v));
	TH_CHECK_EQ(v, 222);
	TH_CHECK_RC(uh_free(h, b));
	TH_CHECK_RC(uh_free(h, hold));
}

/* A block that allocates and rolls back still uses up a generation. */
static void test_rollback_moves_on(uh_heap *h)
{
	uh_off a, b;

	TH_CHECK_RC(uh_alloc(h, big_cls, &a));
	TH_CHECK_RC(uh_free(h, a));
	TH_CHECK_RC(uh_begin(h));
	b = realloc_slot(h, a);
	TH_CHECK_RC(uh_abort(h));
	TH_CHECK(b != 0);
	uh_off c = realloc_slot(h, a);
	TH_CHECK(c != 0 && UH_REF_GEN(c) != UH_REF_GEN(b) && UH_REF_GEN(c) != UH_REF_GEN(a));
	if (c)
		TH_CHECK_RC(uh_free(h, c));
}

/* A large object's region goes back to libpmemobj when freed; later
 * large objects land there again (libpmemobj reuses free chunks). Every
 * old reference must stay dead, whatever lands at its offset. */
#define LARGE_ROUNDS 64
static void test_large_region(uh_heap *h)
{
	static char data[40000];
	uh_off old[LARGE_ROUNDS], o;
	uint32_t cls;
	int reused = 0;

	for (int i = 0; i < LARGE_ROUNDS; i++) {
		TH_CHECK_RC(uh_bytes_new(h, data, sizeof(data), &o));
		for (int j = 0; j < i; j++) {
			reused += UH_REF_OFFSET(old[j]) == UH_REF_OFFSET(o);
			TH_CHECK(old[j] != o);
			TH_CHECK_ERR(uh_obj_class(h, old[j], &cls), UH_EFREED);
		}
		TH_CHECK_RC(uh_obj_class(h, o, &cls));
		TH_CHECK_RC(uh_free(h, o));
		old[i] = o;
	}
	printf("large objects placed at the offset of an earlier, freed one: %d of %d\n",
	       reused, LARGE_ROUNDS);
	TH_CHECK(reused > 0);	/* else this test did not test region reuse */
}

/* A stored reference to an object freed without unlinking it dangles;
 * once the slot is reused it names another generation: uh_heap_check
 * says so and recovery GC nulls it. */
static void test_dangling_in_heap(struct th_heapd *d, uh_heap **hp)
{
	uh_heap *h = *hp;
	uh_off hold, a, b, got;
	uint64_t objects;
	char out[8192];

	TH_CHECK_RC(uh_alloc(h, holder_cls, &hold));
	TH_CHECK_RC(uh_alloc(h, big_cls, &a));
	TH_CHECK_RC(uh_set_ref(h, hold, 0, a));
	TH_CHECK_RC(uh_root_set(h, "gen.holder", hold));
	TH_CHECK_RC(uh_free(h, a));	/* dangling from here on */
	b = realloc_slot(h, a);
	TH_CHECK(b != 0);
	TH_CHECK_RC(uh_root_set(h, "gen.new", b));
	TH_CHECK_ERR(uh_heap_check(h, &objects), UH_EINTERNAL);
	TH_CHECK(strstr(uh_errmsg(), "generation") != NULL);
	uh_disconnect(h);
	*hp = NULL;
	/* Only the full recovery GC nulls (an online cycle, the default
	 * after a restart on the same boot, skips what dangles: 9.4). */
	th_heapd_stop(d);
	TH_CHECK(th_heapd_start(d, "--recovery-gc full") == 0);
	TH_CHECK(th_heapctl(d, "status", out, sizeof(out)) == 0);
	TH_CHECK(strstr(out, "1 refs nulled") != NULL);
	TH_CHECK_RC(th_connect(d, 0, hp));
	h = *hp;
	if (!h)
		return;
	TH_CHECK_RC(uh_root_get(h, "gen.holder", &hold));
	TH_CHECK_RC(uh_get_ref(h, hold, 0, &got));
	TH_CHECK_EQ(got, 0);
	TH_CHECK_RC(uh_root_get(h, "gen.new", &got));
	TH_CHECK_EQ(got, b);
	TH_CHECK_RC(uh_heap_check(h, &objects));
}

int main(void)
{
	struct th_heapd d = { 0 };
	uh_heap *h = NULL;

	if (th_heapd_start(&d, NULL) != 0 || th_connect(&d, 0, &h) != 0) {
		th_fail(__FILE__, __LINE__, "heapd or connect failed");
		th_heapd_cleanup(&d);
		return th_summary(SUITE);
	}
	setup(h);
	test_word_and_ref(h);
	test_stale_same_class(h);
	test_rollback_moves_on(h);
	test_large_region(h);
	test_dangling_in_heap(&d, &h);
	uh_disconnect(h);
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
