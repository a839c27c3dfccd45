/*
 * prog_gc_newobj.c -- a client that dies with new objects of its block
 * still locked by it (FORMAT.md 9.3, "in-flight blocks"), for
 * test_gc_barrier.c to see heapd release them when it reaps the session.
 *
 *   prog_gc_newobj --socket S --hold DIR
 *       begin a block, allocate a string, write its reference (decimal)
 *       to DIR/newobj.ready, then wait with the block open to be
 *       SIGKILLed (exit 3 if nobody does within 30 s).
 *   prog_gc_newobj --socket S --commit
 *       in one block allocate a string and set root "gc.new" to it, then
 *       die at the commit's second barrier (the apply's: the log is
 *       COMMITTED), so that heapd replays the block.
 *
 * Exit: 1 error (printed), 3 not killed; else killed by SIGKILL.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "uhint.h"

static int fail(const char *what, int rc)
{
	fprintf(stderr, "prog_gc_newobj: %s: %s: %s\n", what, uh_strerror(rc), uh_errmsg());
	return 1;
}

static int hold(uh_heap *h, const char *dir)
{
	char text[32];
	uh_off s;
	int rc = uh_begin(h);

	if (rc == 0)
		rc = uh_string_new(h, "in flight", 9, &s);
	if (rc != 0)
		return fail("hold", rc);
	snprintf(text, sizeof(text), "%llu", (unsigned long long)s);
	th_signal_file(dir, "newobj.ready", text);
	for (int i = 0; i < 3000; i++)	/* bound: 30 s */
		th_sleep_ms(10);
	fprintf(stderr, "prog_gc_newobj: nobody killed me within 30 s\n");
	return 3;
}

static int commit_and_die(uh_heap *h)
{
	uh_off s;
	int rc = uh_begin(h);

	if (rc == 0)
		rc = uh_string_new(h, "committed", 9, &s);
	if (rc == 0)
		rc = uh_root_set(h, "gc.new", s);
	if (rc != 0)
		return fail("commit", rc);
	/* B1 (the log durable, COMMITTED), then die at B2 (after the
	 * apply's stores, before it returns): heapd replays the log. */
	h->crash_at = h->st.barriers + 2;
	rc = uh_commit(h);
	return fail("the commit returned", rc);
}

int main(int argc, char **argv)
{
	uh_heap *h = NULL;
	int rc;

	if (argc < 4 || strcmp(argv[1], "--socket") != 0 ||
	    (strcmp(argv[3], "--hold") == 0 ? argc != 5 : strcmp(argv[3], "--commit") != 0)) {
		fprintf(stderr, "usage: prog_gc_newobj --socket S (--hold DIR | --commit)\n");
		return 1;
	}
	if ((rc = uh_connect(argv[2], 0, &h)) != 0)
		return fail("uh_connect", rc);
	if (strcmp(argv[3], "--hold") == 0)
		return hold(h, argv[4]);
	return commit_and_die(h);
}
