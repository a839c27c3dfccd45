/*
 * test_multiprocess.c -- the shared-heap scenario across processes:
 * process A (prog_mp_a) creates objects and roots and keeps running;
 * process B (prog_mp_b update) attaches, reads them and updates fields;
 * A sees B's update while both run; both detach; heapd restarts; a third
 * process (prog_mp_b check) finds the same roots and values.
 */
#include <stdio.h>
#include <string.h>

#include "harness.h"

static const char *SUITE = "test_multiprocess";

/* This process checks the values too (yet another process). */
static void check_here(const struct th_heapd *d)
{
	uh_heap *h;
	uh_off alice = 0, bob = 0;
	uint32_t cls, f;
	int64_t a = 0, b = 0;

	if (th_connect(d, UH_READONLY, &h) != 0) {
		TH_CHECK(!"connect");
		return;
	}
	TH_CHECK_RC(uh_class_find(h, "Account", &cls));
	TH_CHECK_RC(uh_field_find(h, cls, "balance", &f));
	TH_CHECK_RC(uh_root_get(h, "mp.alice", &alice));
	TH_CHECK_RC(uh_root_get(h, "mp.bob", &bob));
	TH_CHECK_RC(uh_get_i64(h, alice, f, &a));
	TH_CHECK_RC(uh_get_i64(h, bob, f, &b));
	TH_CHECK_EQ(a, 1500);
	TH_CHECK_EQ(b, 1500);
	uh_disconnect(h);
}

int main(void)
{
	static struct th_heapd d;
	pid_t a, b;
	int rc_a, rc_b, rc_c;

	if (th_heapd_start(&d, NULL) != 0) {
		TH_CHECK(!"heapd start");
		return th_summary(SUITE);
	}
	char *argv_a[] = { (char *)th_bin("prog_mp_a"), d.sock, d.dir, NULL };
	a = th_spawn(argv_a, NULL);
	TH_CHECK(a > 0);
	TH_CHECK(th_wait_file(d.dir, "a.ready", 10000) == 0);

	/* A is still running (polling) while B attaches and updates. */
	TH_CHECK_EQ(th_wait_exit_timeout(a, 0), -2);
	char *argv_b[] = { (char *)th_bin("prog_mp_b"), d.sock, "update", NULL };
	b = th_spawn(argv_b, NULL);
	rc_b = th_wait_exit_timeout(b, 20000);
	TH_CHECK_EQ(rc_b, 0);
	if (rc_b == -2)
		th_kill(b);

	/* A sees B's update and exits 0. */
	TH_CHECK(th_wait_file(d.dir, "a.saw", 20000) == 0);
	rc_a = th_wait_exit_timeout(a, 20000);
	TH_CHECK_EQ(rc_a, 0);
	if (rc_a == -2)
		th_kill(a);

	/* Restart heapd; a third process finds the same roots and values. */
	TH_CHECK(th_heapd_restart(&d) == 0);
	char *argv_c[] = { (char *)th_bin("prog_mp_b"), d.sock, "check", NULL };
	rc_c = th_wait_exit_timeout(th_spawn(argv_c, NULL), 20000);
	TH_CHECK_EQ(rc_c, 0);
	check_here(&d);
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
