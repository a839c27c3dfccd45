/*
 * prog_iso_hold.c -- the writers of the reader test (test_iso_reader.c),
 * on the objects at roots "rd.a" and "rd.b" (field 0, an i64).
 *
 *   prog_iso_hold --socket S --hold DIR
 *       begin a block, write 111 into A and 222 into B (which locks both),
 *       create DIR/hold.ready, then wait with the block open to be
 *       SIGKILLed (exit 3 if nobody does within 30 s).
 *   prog_iso_hold --socket S --set VA VB
 *       write VA into A and VB into B in one block with uh_run(), again
 *       while it loses conflicts (a dead holder's locks stay until heapd
 *       reaps it), for at most 10 s; print how many uh_run calls it took.
 *
 * Exit: 0 done, 1 error (printed), 3 hold not killed, 4 gave up.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

struct pair {
	uh_off a, b;
	int64_t va, vb;
};

static int set_body(uh_heap *h, void *arg)
{
	struct pair *p = arg;
	int rc = uh_set_i64(h, p->a, 0, p->va);

	return rc ? rc : uh_set_i64(h, p->b, 0, p->vb);
}

static int fail(const char *what, int rc)
{
	fprintf(stderr, "prog_iso_hold: %s: %s: %s\n", what, uh_strerror(rc), uh_errmsg());
	return 1;
}

static int hold(uh_heap *h, struct pair *p, const char *dir)
{
	int rc = uh_begin(h);

	if (rc == 0)
		rc = set_body(h, p);
	if (rc != 0)
		return fail("hold", rc);
	th_signal_file(dir, "hold.ready", NULL);
	for (int i = 0; i < 3000; i++)
		th_sleep_ms(10);
	fprintf(stderr, "prog_iso_hold: nobody killed me within 30 s\n");
	return 3;
}

static int set(uh_heap *h, struct pair *p)
{
	uint64_t end = th_now_ms() + 10000;
	int calls = 0, rc;

	do {
		calls++;
		rc = uh_run(h, set_body, p, 0);
	} while (rc == UH_ECONFLICT && th_now_ms() < end);
	if (rc == UH_ECONFLICT) {
		fprintf(stderr, "prog_iso_hold: still conflicting after 10 s: %s\n", uh_errmsg());
		return 4;
	}
	if (rc != 0)
		return fail("set", rc);
	printf("prog_iso_hold: set after %d uh_run calls\n", calls);
	return 0;
}

int main(int argc, char **argv)
{
	struct pair p = { 0 };
	uh_heap *h;
	int rc;

	if (argc < 4 || strcmp(argv[1], "--socket") != 0 ||
	    (strcmp(argv[3], "--hold") == 0 ? argc != 5 : strcmp(argv[3], "--set") != 0 || argc != 6)) {
		fprintf(stderr, "usage: prog_iso_hold --socket S (--hold DIR | --set VA VB)\n");
		return 1;
	}
	if ((rc = uh_connect(argv[2], 0, &h)) != 0)
		return fail("uh_connect", rc);
	if ((rc = uh_root_get(h, "rd.a", &p.a)) != 0 || (rc = uh_root_get(h, "rd.b", &p.b)) != 0)
		return fail("roots rd.a, rd.b", rc);
	if (strcmp(argv[3], "--hold") == 0)
		return hold(h, &p, argv[4]);
	p.va = atoll(argv[4]);
	p.vb = atoll(argv[5]);
	rc = set(h, &p);
	uh_disconnect(h);
	return rc;
}
