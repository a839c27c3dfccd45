/*
 * test_heapctl.c -- heapctl against a live heapd: status, classes, roots,
 * stats and health, human and --json output, showing what a C client made;
 * clear failures for a bad socket and bad usage.
 */
#include <stdio.h>
#include <string.h>

#include "harness.h"

static const char *SUITE = "test_heapctl";

static char out[65536];

/* Run heapctl <args>; expect exit code want and every needle in the output. */
static void expect(const struct th_heapd *d, const char *args, int want,
		   const char *const needles[])
{
	int rc = th_heapctl(d, args, out, sizeof(out));
	int ok = rc == want;

	if (rc != want)
		th_fail(__FILE__, __LINE__, "heapctl %s -> exit %d, want %d", args, rc, want);
	else
		th_passed++;
	for (size_t i = 0; needles && needles[i]; i++) {
		if (strstr(out, needles[i])) {
			th_passed++;
		} else {
			th_fail(__FILE__, __LINE__, "heapctl %s: no \"%s\" in the output",
				args, needles[i]);
			ok = 0;
		}
	}
	if (!ok)
		fprintf(stderr, "---- heapctl %s said ----\n%s----\n", args, out);
}

/* What a client made, for heapctl to show. */
static int populate(const struct th_heapd *d)
{
	static const uh_field_spec f[] = { { "count", UH_T_I64, 0 }, { "name", UH_T_STRING, 0 } };
	uh_heap *h;
	uint32_t cls;
	uh_off o = 0;

	if (th_connect(d, 0, &h) != 0)
		return -1;
	TH_CHECK_RC(uh_class_register(h, "CtlThing", f, 2, &cls));
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_alloc(h, cls, &o));
	TH_CHECK_RC(uh_set_i64(h, o, 0, 3));
	TH_CHECK_RC(uh_root_set(h, "ctl.visible.root", o));
	TH_CHECK_RC(uh_commit(h));
	uh_disconnect(h);
	return 0;
}

int main(void)
{
	static struct th_heapd d;
	static const char *const st[] = { "heap.uh", "memory", "does not grow", NULL };
	static const char *const cl[] = { "CtlThing", "count", NULL };
	static const char *const ro[] = { "ctl.visible.root", "CtlThing", NULL };
	static const char *const sa[] = { "attaches", "sessions reaped", NULL };
	static const char *const jst[] = { "{", "heap.uh", "MEMORY", NULL };
	static const char *const jcl[] = { "{", "\"CtlThing\"", NULL };
	static const char *const jro[] = { "{", "\"ctl.visible.root\"", NULL };
	static const char *const jsa[] = { "{", "\"attaches\"", NULL };
	static const char *const empty[] = { "no roots", NULL };
	uint64_t v = 0;

	if (th_heapd_start(&d, NULL) != 0) {
		TH_CHECK(!"heapd start");
		return th_summary(SUITE);
	}
	expect(&d, "roots", 0, empty);
	TH_CHECK(populate(&d) == 0);

	expect(&d, "status", 0, st);
	expect(&d, "classes", 0, cl);
	expect(&d, "roots", 0, ro);
	expect(&d, "stats", 0, sa);
	TH_CHECK(th_find_u64(out, "attaches", &v) == 0 && v >= 1);
	expect(&d, "health", 0, NULL);

	expect(&d, "--json status", 0, jst);
	expect(&d, "--json classes", 0, jcl);
	expect(&d, "--json roots", 0, jro);
	expect(&d, "--json stats", 0, jsa);
	expect(&d, "status --json", 0, jst);	/* options anywhere */
	/* The sizes (FORMAT.md 1.1): a heap created without --max-size is its
	 * pool and does not grow. */
	uint64_t hs = th_status_u64(&d, "heap_size");
	TH_CHECK_EQ(th_status_u64(&d, "pool_size"), hs);
	TH_CHECK_EQ(th_status_u64(&d, "max_size"), hs);

	/* usage errors: exit 64 with a message naming the problem */
	static const char *const unk[] = { "frobnicate", NULL };
	expect(&d, "frobnicate", 64, unk);
	static const char *const opt[] = { "--bogus", NULL };
	expect(&d, "--bogus status", 64, opt);

	/* no heapd there: exit 2, naming the socket */
	char *argv[] = { (char *)th_bin("heapctl"), "--socket", "/nonexistent/uniheap.sock",
			 "status", NULL };
	int rc = th_run_capture(argv, out, sizeof(out));
	TH_CHECK_EQ(rc, 2);
	TH_CHECK(strstr(out, "/nonexistent/uniheap.sock") != NULL);
	if (!strstr(out, "/nonexistent/uniheap.sock"))
		fprintf(stderr, "heapctl on a bad socket said: %s\n", out);

	/* --help works without heapd */
	char *help[] = { (char *)th_bin("heapctl"), "--help", NULL };
	TH_CHECK_EQ(th_run_capture(help, out, sizeof(out)), 0);
	TH_CHECK(strstr(out, "usage") != NULL);

	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
