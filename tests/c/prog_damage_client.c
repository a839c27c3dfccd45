/*
 * prog_damage_client.c -- the client half of test_damaged_heap.
 *
 *   prog_damage_client --socket S --fill
 *       populate a fresh heap: records of two classes linked to each
 *       other, strings, a bytes object past the small-object limit (its
 *       own region), an array, a list that grew, a hash map that resized,
 *       a sorted map of three levels, and a root for each.
 *   prog_damage_client --socket S --use
 *       what a client does with a heap heapd agreed to serve: check it
 *       (uh_heap_check), read every root and walk every data type, then
 *       write: register a class, allocate objects of several sizes (new
 *       arenas), a large object (a region of its own), set and delete a
 *       root, free. On a damaged heap any of it may fail with an error;
 *       none of it may crash.
 *
 * Prints one line "use: <what happened>"; exit 0 when every call
 * succeeded, 1 when a call reported an error (printed), 2 when it could
 * not connect. A crash or a hang is what the test looks for.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "uniheap.h"

#define NREC 200
#define NLIST 100
#define NMAP 300
#define NSMAP 2000

static uh_heap *h;

static int fail(const char *what, int rc)
{
	printf("use: %s: %s: %s\n", what, uh_strerror(rc), uh_errmsg());
	return 1;
}

#define TRY(what, call)				\
	do {					\
		int rc_ = (call);		\
		if (rc_ != 0)			\
			return fail(what, rc_);	\
	} while (0)

static uh_key key_i(int64_t i)
{
	return (uh_key){ .kind = UH_KEY_I64, .i64 = i };
}

static uh_key key_s(char *buf, size_t n, const char *fmt, int i)
{
	snprintf(buf, n, fmt, i);
	return (uh_key){ .kind = UH_KEY_STRING, .data = buf, .len = strlen(buf) };
}

static int fill_records(uint32_t node, uint32_t leaf)
{
	uh_off prev = 0, first = 0;
	char text[32];

	for (int i = 0; i < NREC; i++) {
		uh_off n, l, s;
		TRY("alloc", uh_alloc(h, node, &n));
		TRY("alloc", uh_alloc(h, leaf, &l));
		snprintf(text, sizeof(text), "record %d", i);
		TRY("string", uh_string_new(h, text, strlen(text), &s));
		TRY("set", uh_set_i64(h, n, 0, i));
		TRY("set", uh_set_ref(h, n, 1, prev));
		TRY("set", uh_set_ref(h, n, 2, l));
		TRY("set", uh_set_ref(h, n, 3, s));
		TRY("set", uh_set_f64(h, l, 0, i * 0.5));
		prev = n;
		if (!first)
			first = n;
	}
	TRY("root", uh_root_set(h, "chain", prev));
	return uh_root_set(h, "first", first);
}

static int fill_types(void)
{
	static char big[40000];
	uh_off b, a, l, m, sm;
	char kb[32];

	memset(big, 'b', sizeof(big));
	TRY("bytes", uh_bytes_new(h, big, sizeof(big), &b));
	TRY("root", uh_root_set(h, "big", b));
	TRY("array", uh_array_new(h, UH_T_I64, 64, &a));
	TRY("root", uh_root_set(h, "array", a));
	TRY("list", uh_list_new(h, &l));
	for (int i = 0; i < NLIST; i++) {
		uh_value v = { .type = UH_T_I64, .u.i = i };
		TRY("append", uh_list_append(h, l, &v));
	}
	TRY("root", uh_root_set(h, "list", l));
	TRY("map", uh_map_new(h, UH_KEY_STRING, &m));
	for (int i = 0; i < NMAP; i++) {
		uh_key k = key_s(kb, sizeof(kb), "key-%d", i);
		uh_value v = { .type = UH_T_I64, .u.i = i };
		TRY("put", uh_map_put(h, m, &k, &v, 0));
	}
	TRY("root", uh_root_set(h, "map", m));
	TRY("smap", uh_smap_new(h, UH_KEY_I64, &sm));
	for (int i = 0; i < NSMAP; i++) {
		uh_key k = key_i(i * 7919 % NSMAP);
		uh_value v = { .type = UH_T_I64, .u.i = i };
		TRY("put", uh_smap_put(h, sm, &k, &v, 0));
	}
	return uh_root_set(h, "smap", sm);
}

static int fill(void)
{
	uint32_t node, leaf;
	uh_field_spec nf[] = { { "id", UH_T_I64, 0 }, { "next", UH_T_REF, 0 },
			       { "leaf", UH_T_REF, 0 }, { "name", UH_T_STRING, 0 } };
	uh_field_spec lf[] = { { "x", UH_T_F64, 0 } };

	TRY("register", uh_class_register(h, "DamageNode", nf, 4, &node));
	TRY("register", uh_class_register(h, "DamageLeaf", lf, 1, &leaf));
	TRY("begin", uh_begin(h));
	int rc = fill_records(node, leaf);
	if (rc == 0)
		rc = fill_types();
	if (rc != 0) {
		uh_abort(h);
		return rc;
	}
	TRY("commit", uh_commit(h));
	printf("use: filled\n");
	return 0;
}

/* Every root, every data type walked. Errors are expected on a damaged
 * heap; the first one ends the walk. */
static int read_all(void)
{
	uint64_t cursor = 0, n = 0;
	const char *name;
	size_t name_len;
	uh_off v;
	uh_iter it;
	uh_key k;
	uh_value val;
	int rc;

	while ((rc = uh_root_next(h, &cursor, &name, &name_len, &v)) == 0) {	/* bound: roots */
		uint32_t cls;
		TRY("class", uh_obj_class(h, v, &cls));
		if (cls == UH_CLASS_LIST && uh_list_len(h, v, &n) == 0)
			for (uint64_t i = 0; i < n; i++)
				TRY("list get", uh_list_get(h, v, i, &val));
		if (cls == UH_CLASS_MAP) {
			memset(&it, 0, sizeof(it));
			while ((rc = uh_map_next(h, v, &it, &k, &val)) == 0)
				n++;
			if (rc != UH_ENOTFOUND)
				return fail("map next", rc);
		}
		if (cls == UH_CLASS_SMAP) {
			TRY("scan", uh_smap_scan(h, v, NULL, 0, &it));
			while ((rc = uh_smap_next(h, v, &it, &k, &val)) == 0)
				n++;
			if (rc != UH_ENOTFOUND)
				return fail("smap next", rc);
		}
	}
	return rc == UH_ENOTFOUND ? 0 : fail("root next", rc);
}

static int write_some(void)
{
	static char big[30000];
	uh_field_spec f[] = { { "n", UH_T_I64, 0 }, { "s", UH_T_STRING, 0 } };
	uint32_t cls;
	uh_off o, s, b;

	TRY("register", uh_class_register(h, "DamageNew", f, 2, &cls));
	TRY("begin", uh_begin(h));
	for (int i = 0; i < 50; i++) {
		char text[600];
		memset(text, 'a' + i % 26, sizeof(text));
		TRY("alloc", uh_alloc(h, cls, &o));
		TRY("string", uh_string_new(h, text, (size_t)(i * 11 % 600), &s));
		TRY("set", uh_set_ref(h, o, 1, s));
	}
	TRY("bytes", uh_bytes_new(h, big, sizeof(big), &b));
	TRY("root", uh_root_set(h, "new", o));
	TRY("root", uh_root_set(h, "newbig", b));
	TRY("commit", uh_commit(h));
	TRY("begin", uh_begin(h));
	TRY("free", uh_free(h, b));
	TRY("root", uh_root_del(h, "newbig"));
	TRY("commit", uh_commit(h));
	return 0;
}

static int use(void)
{
	uint64_t objects = 0;
	int rc = uh_heap_check(h, &objects);

	if (rc != 0)
		printf("use: check: %s\n", uh_errmsg());	/* go on: the reads must not crash either */
	if (read_all() != 0 || write_some() != 0)
		return 1;
	printf("use: %s, %llu objects, reads and writes done\n", rc ? "check found a problem" :
	       "check ok", (unsigned long long)objects);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *sock = NULL, *mode = NULL;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--socket") && i + 1 < argc)
			sock = argv[++i];
		else
			mode = argv[i];
	}
	if (!mode || (strcmp(mode, "--fill") && strcmp(mode, "--use"))) {
		fprintf(stderr, "usage: prog_damage_client --socket S --fill|--use\n");
		return 64;
	}
	int rc = uh_connect(sock, 0, &h);
	if (rc != 0) {
		printf("use: connect: %s: %s\n", uh_strerror(rc), uh_errmsg());
		return 2;
	}
	rc = !strcmp(mode, "--fill") ? fill() : use();
	uh_disconnect(h);
	return rc;
}
