/*
 * prog_notify_peer.c -- the C peer of the cross-language notification
 * test (tests/notify/test_pairs.py; the protocol is in its header):
 *
 *   prog_notify_peer SOCKET ROOT ROLE ROUNDS      (ROLE: writer | waiter)
 *
 * ROOT names a NotifyCell { ping, pong, ts: i64 }. The writer sets ts (the
 * monotonic clock) and ping = i in one block, then waits for pong == i; the
 * waiter waits for ping == i, notes the latency from ts, sets pong = i.
 * Every wait is bounded by 10 s: a wait that reaches the bound is a lost
 * wake-up (exit 3).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "uniheap.h"

static uint32_t f_ping, f_pong, f_ts;

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Wait until field f of cell is want; 0, 3 (lost wake-up) or 2 (error). */
static int wait_for(uh_heap *h, uh_off cell, uint32_t f, int64_t want)
{
	for (;;) {	/* bound: each wait is bounded by 10 s */
		uint64_t tok;
		int64_t v;
		if (uh_change_token(h, cell, &tok) != 0 || uh_get_i64(h, cell, f, &v) != 0)
			return 2;
		if (v == want)
			return 0;
		int64_t t0 = mono_ns();
		int rc = uh_wait(h, cell, tok, 10000000000ll, NULL);
		if (rc < 0)
			return 2;
		if (rc == 0 || mono_ns() - t0 >= 9000000000ll) {
			fprintf(stderr, "peer c: no wake-up within 10 s waiting for %lld\n",
				(long long)want);
			return 3;
		}
	}
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static int writer(uh_heap *h, uh_off cell, long rounds)
{
	for (long i = 1; i <= rounds; i++) {	/* bound: rounds */
		int rc = uh_begin(h);
		if (!rc) rc = uh_set_i64(h, cell, f_ts, mono_ns());
		if (!rc) rc = uh_set_i64(h, cell, f_ping, i);
		if (!rc) rc = uh_commit(h);
		else if (uh_in_block(h)) uh_abort(h);
		if (rc || (rc = wait_for(h, cell, f_pong, i)) != 0)
			return rc == 3 ? 3 : 2;
	}
	printf("peer c writer: %ld rounds\n", rounds);
	return 0;
}

static int waiter(uh_heap *h, uh_off cell, long rounds)
{
	int64_t *lat = calloc((size_t)rounds, sizeof(*lat));
	int rc = lat ? 0 : 2;

	for (long i = 1; !rc && i <= rounds; i++) {	/* bound: rounds */
		int64_t ts;
		if ((rc = wait_for(h, cell, f_ping, i)) != 0)
			break;
		int64_t now = mono_ns();
		if (uh_get_i64(h, cell, f_ts, &ts) != 0 || uh_set_i64(h, cell, f_pong, i) != 0)
			rc = 2;
		lat[i - 1] = now - ts;
	}
	if (!rc) {
		qsort(lat, (size_t)rounds, sizeof(*lat), cmp_i64);
		printf("peer c waiter: %ld rounds\n", rounds);
		printf("latency_us p50=%.1f p99=%.1f max=%.1f\n", lat[rounds / 2] / 1e3,
		       lat[rounds * 99 / 100] / 1e3, lat[rounds - 1] / 1e3);
	}
	free(lat);
	return rc;
}

int main(int argc, char **argv)
{
	uh_heap *h;
	uh_off cell;
	uint32_t cls;

	if (argc != 5 || (strcmp(argv[3], "writer") && strcmp(argv[3], "waiter")) ||
	    atol(argv[4]) < 1) {
		fprintf(stderr, "usage: %s SOCKET ROOT writer|waiter ROUNDS\n", argv[0]);
		return 64;
	}
	if (uh_connect(argv[1], 0, &h) != 0 || uh_root_get(h, argv[2], &cell) != 0 ||
	    uh_obj_class(h, cell, &cls) != 0 || uh_field_find(h, cls, "ping", &f_ping) != 0 ||
	    uh_field_find(h, cls, "pong", &f_pong) != 0 || uh_field_find(h, cls, "ts", &f_ts) != 0) {
		fprintf(stderr, "peer c: %s\n", uh_errmsg());
		return 2;
	}
	long rounds = atol(argv[4]);
	int rc = argv[3][1] == 'r' ? writer(h, cell, rounds) : waiter(h, cell, rounds);
	if (rc == 2)
		fprintf(stderr, "peer c %s: %s\n", argv[3], uh_errmsg());
	fflush(stdout);
	uh_disconnect(h);
	return rc;
}
