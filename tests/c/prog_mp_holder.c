/*
 * prog_mp_holder.c -- the client that dies in test_client_death.
 * Usage: prog_mp_holder <socket> <syncdir>
 *
 * Finds the roots "death.a" and "death.b", begins a block, writes 666 and
 * 667 into their field 0 (which locks both objects), writes
 * <syncdir>/holder.ready and then waits, block open, to be SIGKILLed.
 * Exits 3 if nobody kills it within 30 s (so it never outlives a test).
 */
#include <stdio.h>
#include <unistd.h>

#include "harness.h"

int main(int argc, char **argv)
{
	uh_heap *h = NULL;
	uh_off a = 0, b = 0;
	int rc;

	if (argc != 3) {
		fprintf(stderr, "usage: prog_mp_holder <socket> <syncdir>\n");
		return 2;
	}
	rc = uh_connect(argv[1], 0, &h);
	if (rc == 0) rc = uh_root_get(h, "death.a", &a);
	if (rc == 0) rc = uh_root_get(h, "death.b", &b);
	if (rc == 0) rc = uh_begin(h);
	if (rc == 0) rc = uh_set_i64(h, a, 0, 666);
	if (rc == 0) rc = uh_set_i64(h, b, 0, 667);
	if (rc != 0) {
		fprintf(stderr, "holder: %s: %s\n", uh_strerror(rc), uh_errmsg());
		return 1;
	}
	printf("holder: block open, objects locked (pid %d)\n", (int)getpid());
	fflush(stdout);
	th_signal_file(argv[2], "holder.ready", NULL);
	for (int i = 0; i < 3000; i++)
		th_sleep_ms(10);
	fprintf(stderr, "holder: nobody killed me within 30 s\n");
	return 3;
}
