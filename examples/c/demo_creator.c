/*
 * demo_creator.c -- process 1 of `make demo`.
 * Usage: demo_creator <ready-file> [increase]
 *
 * Connects to heapd ($UNIHEAP_SOCKET), creates (or, on a later run, finds)
 * a small object graph published under the root "demo.board":
 *     Board { title: string, counter: ref Counter }
 *     Counter { value: i64, writer_pid: i64 }
 * adds 1 to the counter in a failure-atomic block, creates <ready-file>,
 * then sleeps until other processes change the counter (uh_wait: woken by
 * their commits, no polling), saying each new value it sees and who wrote
 * it, until they have added increase to it (default: until the first
 * change; 40 s at most). Prints each step in plain words.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "uniheap.h"

static const uh_field_spec board_fields[] = {
	{ "title", UH_T_STRING, 0 }, { "counter", UH_T_REF, 0 },
};
static const uh_field_spec counter_fields[] = {
	{ "value", UH_T_I64, 0 }, { "writer_pid", UH_T_I64, 0 },
};
enum { B_TITLE, B_COUNTER };
enum { C_VALUE, C_WRITER };

static int fail(const char *what, int rc)
{
	fprintf(stderr, "process 1: %s failed: %s: %s\n", what, uh_strerror(rc), uh_errmsg());
	return 1;
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Make Board + Counter + title and publish them as "demo.board", all in
 * one block: another process sees all of it or none of it. */
static int create_board(uh_heap *h, uint32_t board_cls, uint32_t counter_cls, uh_off *board)
{
	static const char title[] = "uniheap demo board";
	uh_field_info title_fi;
	uh_off counter = 0, s = 0;
	int rc = uh_field_info_get(h, board_cls, B_TITLE, &title_fi);

	if (rc == 0) rc = uh_begin(h);
	if (rc == 0) rc = uh_alloc(h, board_cls, board);
	if (rc == 0) rc = uh_alloc(h, counter_cls, &counter);
	if (rc == 0) rc = uh_string_new(h, title, sizeof(title) - 1, &s);
	if (rc == 0) rc = uh_write(h, *board, title_fi.offset, &s, 8);
	if (rc == 0) rc = uh_set_ref(h, *board, B_COUNTER, counter);
	if (rc == 0) rc = uh_root_set(h, "demo.board", *board);
	if (rc == 0)
		return uh_commit(h);
	if (uh_in_block(h))
		uh_abort(h);
	return rc;
}

/* counter.value += 1, counter.writer_pid = us; one block, re-run on a
 * conflict with another writer. */
static int bump(uh_heap *h, uh_off counter, int64_t *now)
{
	int rc;

	for (int tries = 0; tries < 100; tries++) {
		int64_t v = 0;
		rc = uh_begin(h);
		if (rc == 0) rc = uh_get_i64(h, counter, C_VALUE, &v);
		if (rc == 0) rc = uh_set_i64(h, counter, C_VALUE, v + 1);
		if (rc == 0) rc = uh_set_i64(h, counter, C_WRITER, (int64_t)getpid());
		if (rc == 0) rc = uh_commit(h);
		if (rc == 0)
			*now = v + 1;
		else if (uh_in_block(h))
			uh_abort(h);
		if (rc != UH_ECONFLICT)
			break;
	}
	return rc;
}

int main(int argc, char **argv)
{
	uh_heap *h = NULL;
	uint32_t board_cls, counter_cls;
	uh_off board = 0, counter = 0;
	int64_t value = 0, seen = 0, writer = 0;
	int rc;

	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: demo_creator <ready-file> [increase]\n");
		return 2;
	}
	int64_t increase = argc == 3 ? strtoll(argv[2], NULL, 10) : 0;
	printf("process 1 (pid %d): connecting to heapd\n", (int)getpid());
	if ((rc = uh_connect(NULL, 0, &h)) != 0)
		return fail("connect", rc);
	if ((rc = uh_class_register(h, "DemoCounter", counter_fields, 2, &counter_cls)) != 0)
		return fail("registering class DemoCounter", rc);
	uh_field_spec bf[2] = { board_fields[0], board_fields[1] };
	bf[B_COUNTER].ref_class = counter_cls;	/* a typed reference */
	if ((rc = uh_class_register(h, "DemoBoard", bf, 2, &board_cls)) != 0)
		return fail("registering class DemoBoard", rc);

	if (uh_root_get(h, "demo.board", &board) == 0) {
		printf("process 1: found root \"demo.board\" from an earlier run "
		       "(object at offset %llu)\n", (unsigned long long)board);
	} else {
		if ((rc = create_board(h, board_cls, counter_cls, &board)) != 0)
			return fail("creating the board", rc);
		printf("process 1: created a Board and a Counter and published them as "
		       "root \"demo.board\" in one atomic block\n");
	}
	if ((rc = uh_get_ref(h, board, B_COUNTER, &counter)) != 0)
		return fail("reading board.counter", rc);
	if ((rc = bump(h, counter, &value)) != 0)
		return fail("incrementing the counter", rc);
	printf("process 1: incremented the counter to %lld (committed, durable)\n",
	       (long long)value);
	fflush(stdout);

	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0)
		close(fd);
	printf("process 1: now waiting for other processes to change the counter...\n");
	fflush(stdout);

	/* No polling: sleep until another process's commit changes the
	 * counter (uh_wait), then read it. Taking the token before the read
	 * means a change committed between the two is not missed. Each new
	 * value is reported once, with the pid that wrote it. */
	int64_t last = value;
	uint64_t deadline = now_ms() + 40000;
	while (last - value < increase && now_ms() < deadline) {
		uint64_t token;
		if ((rc = uh_change_token(h, counter, &token)) != 0 ||
		    (rc = uh_get_i64(h, counter, C_VALUE, &seen)) != 0)
			return fail("reading the counter", rc);
		if (seen != last) {
			uh_get_i64(h, counter, C_WRITER, &writer);
			printf("process 1: woken by the update, read in its own mapping: "
			       "counter = %lld, written by pid %lld\n", (long long)seen,
			       (long long)writer);
			fflush(stdout);
			last = seen;
			continue;
		}
		rc = uh_wait(h, counter, token, (int64_t)(deadline - now_ms()) * 1000000, NULL);
		if (rc < 0)
			return fail("waiting for a change of the counter", rc);
	}
	if (last == value || last - value < increase) {
		printf("process 1: the counter did not grow by %lld within 40 s\n",
		       (long long)(increase ? increase : 1));
		uh_disconnect(h);
		return 1;
	}
	uh_disconnect(h);
	printf("process 1: detached\n");
	return 0;
}
