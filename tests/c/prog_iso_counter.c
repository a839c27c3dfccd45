/*
 * prog_iso_counter.c -- one incrementer of the lost-update test: adds 1 to
 * the counter object at root "iso.counter" (an IsoLedger, iso_model.h) M
 * times, each time in its own block run with uh_run().
 *
 *   prog_iso_counter --socket S --count M [--dwell-us U] [--go FILE]
 *                    [--result FILE]
 *
 * The block reads the count, busy-waits U us (so that other processes
 * read the same value meanwhile) and writes count + 1: without
 * serializable blocks, increments get lost.
 * --result FILE: "done=<n> conflicts=.. retries=.. lock_waits=..".
 * Exit: 0 done, 1 error (printed), 4 conflicts for 30 s on one increment.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "iso_model.h"

#define GIVE_UP_MS 30000


static void fail(const char *what, int rc)
{
	fprintf(stderr, "prog_iso_counter: %s: %s: %s\n", what, uh_strerror(rc), uh_errmsg());
	exit(1);
}

int main(int argc, char **argv)
{
	const char *sock = NULL, *go = NULL, *result = NULL;
	struct iso_inc x = { 0 };
	long count = 0, done = 0;
	uh_stats st;
	uh_heap *h;
	int rc;

	for (int i = 1; i + 1 < argc; i += 2) {
		const char *a = argv[i], *v = argv[i + 1];
		if (!strcmp(a, "--socket")) sock = v;
		else if (!strcmp(a, "--count")) count = atol(v);
		else if (!strcmp(a, "--dwell-us")) x.dwell_us = (unsigned)atoi(v);
		else if (!strcmp(a, "--go")) go = v;
		else if (!strcmp(a, "--result")) result = v;
		else { fprintf(stderr, "prog_iso_counter: unknown option %s\n", a); return 1; }
	}
	if ((rc = uh_connect(sock, 0, &h)) != 0)
		fail("uh_connect", rc);
	if ((rc = uh_root_get(h, "iso.counter", &x.counter)) != 0)
		fail("root iso.counter", rc);
	while (go && access(go, F_OK) != 0)
		usleep(1000);
	for (; done < count; done++) {
		uint64_t start = iso_now_us();
		while ((rc = uh_run(h, iso_inc_body, &x, 0)) == UH_ECONFLICT)
			if (iso_now_us() - start > GIVE_UP_MS * 1000ull) {
				fprintf(stderr, "prog_iso_counter: no commit for %d ms: %s\n",
					GIVE_UP_MS, uh_errmsg());
				return ISO_EXIT_GAVE_UP;
			}
		if (rc != 0)
			fail("increment", rc);
	}
	uh_stats_get(h, &st);
	if (result) {
		FILE *f = fopen(result, "w");
		if (!f || fprintf(f, "done=%ld conflicts=%llu retries=%llu lock_waits=%llu\n", done,
				  (unsigned long long)st.conflicts,
				  (unsigned long long)st.retries,
				  (unsigned long long)st.lock_waits) < 0 || fclose(f) != 0) {
			fprintf(stderr, "prog_iso_counter: %s: %s\n", result, strerror(errno));
			return 1;
		}
	}
	uh_disconnect(h);
	return 0;
}
