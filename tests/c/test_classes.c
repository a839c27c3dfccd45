/*
 * test_classes.c -- class registration and the class table as a client sees
 * it: idempotent registration, ClassMismatch naming the field, refused
 * declarations, lookups, field layout, built-in classes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static const char *SUITE = "test_classes";

static const uh_field_spec point_fields[] = {
	{ "x", UH_T_I64, 0 },
	{ "y", UH_T_I64, 0 },
	{ "label", UH_T_STRING, 0 },
};

static void test_idempotent(uh_heap *h, uint32_t *point)
{
	uint32_t id1 = 0, id2 = 0;

	TH_CHECK_RC(uh_class_register(h, "Point", point_fields, 3, &id1));
	TH_CHECK_RC(uh_class_register(h, "Point", point_fields, 3, &id2));
	TH_CHECK_EQ(id1, id2);
	/* ids 1..4 are the built-in classes */
	TH_CHECK(id1 > 4);
	*point = id1;
}

static void test_mismatch(uh_heap *h)
{
	static const uh_field_spec other_type[] = {
		{ "x", UH_T_I64, 0 }, { "y", UH_T_F64, 0 }, { "label", UH_T_STRING, 0 },
	};
	static const uh_field_spec other_name[] = {
		{ "x", UH_T_I64, 0 }, { "y", UH_T_I64, 0 }, { "title", UH_T_STRING, 0 },
	};
	static const uh_field_spec fewer[] = { { "x", UH_T_I64, 0 } };
	uint32_t id = 0;

	TH_CHECK_ERR(uh_class_register(h, "Point", other_type, 3, &id), UH_ECLASSMISMATCH);
	TH_CHECK(strstr(uh_errmsg(), "y") != NULL);
	if (!strstr(uh_errmsg(), "y"))
		fprintf(stderr, "  errmsg was: %s\n", uh_errmsg());
	TH_CHECK_ERR(uh_class_register(h, "Point", other_name, 3, &id), UH_ECLASSMISMATCH);
	TH_CHECK(strstr(uh_errmsg(), "label") || strstr(uh_errmsg(), "title"));
	if (!strstr(uh_errmsg(), "label") && !strstr(uh_errmsg(), "title"))
		fprintf(stderr, "  errmsg was: %s\n", uh_errmsg());
	TH_CHECK_ERR(uh_class_register(h, "Point", fewer, 1, &id), UH_ECLASSMISMATCH);
	TH_CHECK(uh_errmsg()[0] != '\0');
}

static void test_bad_names(uh_heap *h)
{
	static const uh_field_spec one[] = { { "v", UH_T_I32, 0 } };
	char longname[300];
	uint32_t id;

	memset(longname, 'N', 256);
	longname[256] = '\0';
	TH_CHECK_ERR(uh_class_register(h, "", one, 1, &id), UH_EINVAL);
	TH_CHECK_ERR(uh_class_register(h, NULL, one, 1, &id), UH_EINVAL);
	TH_CHECK_ERR(uh_class_register(h, longname, one, 1, &id), UH_EINVAL);
	TH_CHECK(uh_errmsg()[0] != '\0');
	TH_CHECK_ERR(uh_class_register(h, "Bad\xff\xfe", one, 1, &id), UH_EINVAL);
	/* 255 bytes is the limit, and fine */
	longname[255] = '\0';
	TH_CHECK_RC(uh_class_register(h, longname, one, 1, &id));
}

static void test_bad_fields(uh_heap *h)
{
	uh_field_spec f[2] = { { "ok", UH_T_I64, 0 }, { "ok2", UH_T_I64, 0 } };
	char longfield[80];
	uint32_t id;

	memset(longfield, 'f', 64);
	longfield[64] = '\0';
	const char *bad_names[] = { "", "9lives", "a-b", "a b", "é", longfield };
	for (size_t i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]); i++) {
		f[1].name = bad_names[i];
		TH_CHECK_ERR(uh_class_register(h, "BadField", f, 2, &id), UH_EINVAL);
	}
	f[1].name = NULL;
	TH_CHECK_ERR(uh_class_register(h, "BadField", f, 2, &id), UH_EINVAL);
	f[1].name = "ok";	/* duplicate */
	TH_CHECK_ERR(uh_class_register(h, "BadField", f, 2, &id), UH_EINVAL);
	f[1].name = "ok2";
	f[1].type = 0;
	TH_CHECK_ERR(uh_class_register(h, "BadType", f, 2, &id), UH_EINVAL);
	f[1].type = UH_T_BYTES + 1;
	TH_CHECK_ERR(uh_class_register(h, "BadType", f, 2, &id), UH_EINVAL);
	f[1].type = 999;
	TH_CHECK_ERR(uh_class_register(h, "BadType", f, 2, &id), UH_EINVAL);
	TH_CHECK_ERR(uh_class_register(h, "NullFields", NULL, 2, &id), UH_EINVAL);
	/* none of the refused classes exists */
	TH_CHECK_ERR(uh_class_find(h, "BadField", &id), UH_ENOTFOUND);
	TH_CHECK_ERR(uh_class_find(h, "BadType", &id), UH_ENOTFOUND);
}

static void test_too_many_fields(uh_heap *h)
{
	enum { N = 1025 };
	uh_field_spec *f = calloc(N, sizeof(*f));
	char (*names)[16] = calloc(N, 16);
	uint32_t id;

	if (!f || !names) {
		TH_CHECK(!"out of memory");
		free(f);
		free(names);
		return;
	}
	for (int i = 0; i < N; i++) {
		snprintf(names[i], 16, "f%d", i);
		f[i].name = names[i];
		f[i].type = UH_T_I8;
	}
	TH_CHECK_ERR(uh_class_register(h, "Huge", f, N, &id), UH_EINVAL);
	TH_CHECK(uh_errmsg()[0] != '\0');
	/* 1024 fields is the documented maximum */
	TH_CHECK_RC(uh_class_register(h, "Big", f, N - 1, &id));
	free(f);
	free(names);
}

static void test_lookup(uh_heap *h, uint32_t point)
{
	uh_class_info ci;
	uh_field_info fi;
	uint32_t id = 0, idx = 99;

	TH_CHECK_RC(uh_class_find(h, "Point", &id));
	TH_CHECK_EQ(id, point);
	TH_CHECK_ERR(uh_class_find(h, "NoSuchClass", &id), UH_ENOTFOUND);

	TH_CHECK_RC(uh_class_info_get(h, point, &ci));
	TH_CHECK_EQ(ci.class_id, point);
	TH_CHECK_EQ(ci.kind, 1);
	TH_CHECK_EQ(ci.nfields, 3);
	TH_CHECK(ci.payload_size >= 24);
	TH_CHECK(ci.name && strcmp(ci.name, "Point") == 0);

	TH_CHECK_RC(uh_field_info_get(h, point, 0, &fi));
	TH_CHECK(fi.name && strcmp(fi.name, "x") == 0);
	TH_CHECK_EQ(fi.type, UH_T_I64);
	TH_CHECK_EQ(fi.offset, 16);
	TH_CHECK_RC(uh_field_info_get(h, point, 2, &fi));
	TH_CHECK(fi.name && strcmp(fi.name, "label") == 0);
	TH_CHECK_EQ(fi.type, UH_T_STRING);
	TH_CHECK_EQ(fi.offset, 32);
	TH_CHECK_ERR(uh_field_info_get(h, point, 3, &fi), UH_ERANGE);
	TH_CHECK_ERR(uh_field_info_get(h, 4000, 0, &fi), UH_ENOTFOUND);

	TH_CHECK_RC(uh_field_find(h, point, "y", &idx));
	TH_CHECK_EQ(idx, 1);
	TH_CHECK_ERR(uh_field_find(h, point, "z", &idx), UH_ENOTFOUND);

	TH_CHECK_ERR(uh_class_info_get(h, 0, &ci), UH_ENOTFOUND);
	TH_CHECK_ERR(uh_class_info_get(h, 4000, &ci), UH_ENOTFOUND);
	TH_CHECK_ERR(uh_class_info_get(h, 0xffffffffu, &ci), UH_ENOTFOUND);
}

/* Declaration order, natural alignment, first field at 16. */
static void test_layout(uh_heap *h)
{
	static const uh_field_spec f[] = {
		{ "a", UH_T_I8, 0 }, { "b", UH_T_I64, 0 }, { "c", UH_T_I16, 0 },
		{ "d", UH_T_I32, 0 }, { "e", UH_T_BOOL, 0 }, { "g", UH_T_F32, 0 },
		{ "r", UH_T_REF, 0 }, { "s", UH_T_BYTES, 0 }, { "h", UH_T_F64, 0 },
	};
	static const uint32_t want[] = { 16, 24, 32, 36, 40, 44, 48, 56, 64 };
	uh_class_info ci;
	uint32_t id;

	TH_CHECK_RC(uh_class_register(h, "Mixed", f, 9, &id));
	for (uint32_t i = 0; i < 9; i++) {
		uh_field_info fi;
		TH_CHECK_RC(uh_field_info_get(h, id, i, &fi));
		TH_CHECK_EQ(fi.offset, want[i]);
		TH_CHECK_EQ(fi.type, f[i].type);
	}
	TH_CHECK_RC(uh_class_info_get(h, id, &ci));
	TH_CHECK(ci.payload_size >= 72 - 16);

	/* a typed ref remembers its target class */
	uh_field_spec tr[] = { { "to", UH_T_REF, id } };
	uint32_t tid;
	uh_field_info fi;
	TH_CHECK_RC(uh_class_register(h, "TypedRef", tr, 1, &tid));
	TH_CHECK_RC(uh_field_info_get(h, tid, 0, &fi));
	TH_CHECK_EQ(fi.ref_class, id);
	/* an empty record is allowed (0 fields) */
	TH_CHECK_RC(uh_class_register(h, "Empty", NULL, 0, &tid));
}

static void test_builtins(uh_heap *h)
{
	static const uint32_t kinds[] = { 0, 2, 3, 1, 4 };	/* by class id */
	uh_class_info ci;
	uint32_t id;

	for (uint32_t c = 1; c <= 4; c++) {
		TH_CHECK_RC(uh_class_info_get(h, c, &ci));
		TH_CHECK_EQ(ci.class_id, c);
		TH_CHECK_EQ(ci.kind, kinds[c]);
		TH_CHECK(ci.name && ci.name[0]);
		if (ci.name && ci.name[0]) {
			/* and findable by their own name */
			TH_CHECK_RC(uh_class_find(h, ci.name, &id));
			TH_CHECK_EQ(id, c);
		}
	}
}

/* A class registered by one session is visible to another straight from
 * the mapping. */
static void test_other_session(const struct th_heapd *d, uint32_t point)
{
	uh_heap *h2;
	uint32_t id = 0;

	if (th_connect(d, 0, &h2) != 0) {
		TH_CHECK(!"second connect");
		return;
	}
	TH_CHECK_RC(uh_class_find(h2, "Point", &id));
	TH_CHECK_EQ(id, point);
	TH_CHECK_RC(uh_class_register(h2, "Point", point_fields, 3, &id));
	TH_CHECK_EQ(id, point);
	uh_disconnect(h2);
}

int main(void)
{
	static struct th_heapd d;
	uh_heap *h;
	uint32_t point = 0;

	if (th_heapd_start(&d, NULL) != 0 || th_connect(&d, 0, &h) != 0) {
		TH_CHECK(!"heapd start + connect");
		return th_summary(SUITE);
	}
	test_idempotent(h, &point);
	test_mismatch(h);
	test_bad_names(h);
	test_bad_fields(h);
	test_too_many_fields(h);
	test_lookup(h, point);
	test_layout(h);
	test_builtins(h);
	test_other_session(&d, point);
	uh_disconnect(h);

	/* classes are durable */
	if (th_heapd_restart(&d) == 0 && th_connect(&d, 0, &h) == 0) {
		uint32_t id = 0;
		TH_CHECK_RC(uh_class_find(h, "Point", &id));
		TH_CHECK_EQ(id, point);
		uh_disconnect(h);
	} else {
		TH_CHECK(!"restart + reconnect");
	}
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
