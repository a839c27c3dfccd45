/*
 * prog_mp_a.c -- process A of test_multiprocess.
 * Usage: prog_mp_a <socket> <syncdir>
 *
 * Creates two Accounts (alice 1000, bob 2000, owners as strings, peers of
 * each other) and the roots "mp.alice" and "mp.bob" in one block, writes
 * <syncdir>/a.ready, then keeps running and polls until it sees process
 * B's transfer (alice 1500, bob 1500), writes <syncdir>/a.saw and exits 0.
 * Exits 1 if B's update is not seen within 20 s.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static const uh_field_spec account_fields[] = {
	{ "balance", UH_T_I64, 0 },
	{ "owner", UH_T_STRING, 0 },
	{ "peer", UH_T_REF, 0 },
};
enum { BALANCE, OWNER, PEER };

/* One account with an owner string; inside the caller's block. */
static int new_account(uh_heap *h, uint32_t cls, uint32_t owner_off,
		       const char *owner, int64_t balance, uh_off *out)
{
	uh_off s = 0;
	int rc = uh_alloc(h, cls, out);

	if (rc == 0) rc = uh_string_new(h, owner, strlen(owner), &s);
	if (rc == 0) rc = uh_write(h, *out, owner_off, &s, 8);
	if (rc == 0) rc = uh_set_i64(h, *out, BALANCE, balance);
	return rc;
}

static int create_accounts(uh_heap *h, uint32_t cls, uh_off *alice, uh_off *bob)
{
	uh_field_info owner;
	int rc = uh_field_info_get(h, cls, OWNER, &owner);

	if (rc == 0) rc = uh_begin(h);
	if (rc == 0) rc = new_account(h, cls, owner.offset, "alice", 1000, alice);
	if (rc == 0) rc = new_account(h, cls, owner.offset, "bob", 2000, bob);
	if (rc == 0) rc = uh_set_ref(h, *alice, PEER, *bob);
	if (rc == 0) rc = uh_set_ref(h, *bob, PEER, *alice);
	if (rc == 0) rc = uh_root_set(h, "mp.alice", *alice);
	if (rc == 0) rc = uh_root_set(h, "mp.bob", *bob);
	if (rc == 0)
		return uh_commit(h);
	if (uh_in_block(h))
		uh_abort(h);
	return rc;
}

int main(int argc, char **argv)
{
	uh_heap *h = NULL;
	uint32_t cls;
	uh_off alice = 0, bob = 0;
	uint64_t end;
	int rc;

	if (argc != 3) {
		fprintf(stderr, "usage: prog_mp_a <socket> <syncdir>\n");
		return 2;
	}
	rc = uh_connect(argv[1], 0, &h);
	if (rc == 0)
		rc = uh_class_register(h, "Account", account_fields, 3, &cls);
	if (rc == 0)
		rc = create_accounts(h, cls, &alice, &bob);
	if (rc != 0) {
		fprintf(stderr, "A: creating accounts: %s: %s\n", uh_strerror(rc), uh_errmsg());
		return 1;
	}
	printf("A: created alice=1000 bob=2000 (pid %d)\n", (int)getpid());
	fflush(stdout);
	th_signal_file(argv[2], "a.ready", NULL);

	/* Poll, outside any block, until B's transfer shows. */
	end = th_now_ms() + 20000;
	while (th_now_ms() < end) {
		int64_t a = 0, b = 0;
		if (uh_get_i64(h, alice, BALANCE, &a) != 0 ||
		    uh_get_i64(h, bob, BALANCE, &b) != 0) {
			fprintf(stderr, "A: read failed: %s\n", uh_errmsg());
			return 1;
		}
		if (a == 1500 && b == 1500) {
			printf("A: saw B's update: alice=%lld bob=%lld\n",
			       (long long)a, (long long)b);
			fflush(stdout);
			th_signal_file(argv[2], "a.saw", NULL);
			uh_disconnect(h);
			return 0;
		}
		th_sleep_ms(2);
	}
	fprintf(stderr, "A: B's update not seen within 20 s\n");
	uh_disconnect(h);
	return 1;
}
