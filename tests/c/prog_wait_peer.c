/*
 * prog_wait_peer.c -- the other process of test_wait.
 *
 *   prog_wait_peer SOCK pingpong ROOT ROUNDS PARITY
 *       ROOT names a record whose field 0 (i64) is a counter. ROUNDS
 *       times: wait (uh_wait, no polling) until the counter's parity is
 *       PARITY, then add one in a block. The test's process plays the
 *       other parity: a lost wake-up on either side hangs both until
 *       the 10 s bound of the wait, which gives exit status 3.
 *   prog_wait_peer SOCK forever ROOT DIR
 *       Signal DIR/waiting, then wait on ROOT's object with no timeout
 *       (the test kills this process while it waits).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static int pingpong(uh_heap *h, uh_off r, long rounds, int parity)
{
	for (long i = 0; i < rounds; i++) {	/* bound: rounds */
		int64_t v;
		uint64_t tok;
		for (;;) {	/* bound: each wait is bounded below */
			if (uh_change_token(h, r, &tok) != 0 || uh_get_i64(h, r, 0, &v) != 0)
				return 2;
			if ((v & 1) == parity)
				break;
			/* Woken by the change, not found at the end of the
			 * 10 s bound (which a lost wake-up would take). */
			uint64_t t0 = th_now_ms();
			int rc = uh_wait(h, r, tok, 10000000000ll, NULL);
			if (rc == 0 || th_now_ms() - t0 >= 9000) {
				fprintf(stderr, "pingpong: no wake-up in 10 s at round %ld "
					"(counter %lld)\n", i, (long long)v);
				return 3;
			}
			if (rc < 0)
				return 2;
		}
		if (uh_set_i64(h, r, 0, v + 1) != 0)
			return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	uh_heap *h;
	uh_off r;

	if (argc < 5)
		return 64;
	if (uh_connect(argv[1], 0, &h) != 0 || uh_root_get(h, argv[3], &r) != 0) {
		fprintf(stderr, "prog_wait_peer: %s\n", uh_errmsg());
		return 2;
	}
	int rc = 64;
	if (strcmp(argv[2], "pingpong") == 0 && argc == 6) {
		rc = pingpong(h, r, atol(argv[4]), atoi(argv[5]));
	} else if (strcmp(argv[2], "forever") == 0) {
		uint64_t tok;
		if (uh_change_token(h, r, &tok) != 0 ||
		    th_signal_file(argv[4], "waiting", "1") != 0)
			return 2;
		rc = uh_wait(h, r, tok, -1, NULL) == 1 ? 0 : 2;
	}
	if (rc == 2)
		fprintf(stderr, "prog_wait_peer: %s\n", uh_errmsg());
	uh_disconnect(h);
	return rc;
}
