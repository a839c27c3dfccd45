/*
 * demo_updater.c -- process 2 of `make demo`.
 * Usage: demo_updater
 *
 * Connects to heapd ($UNIHEAP_SOCKET), finds the root "demo.board" that
 * process 1 published, reads the board and its counter in place (the field
 * layout comes from the heap's class table: this program declares no
 * class), then adds 10 to the counter in a failure-atomic block.
 */
#include <stdio.h>
#include <unistd.h>

#include "uniheap.h"

static int fail(const char *what, int rc)
{
	fprintf(stderr, "process 2: %s failed: %s: %s\n", what, uh_strerror(rc), uh_errmsg());
	return 1;
}

/* Field index by name in the class of obj. */
static int field(uh_heap *h, uh_off obj, const char *name, uint32_t *index)
{
	uint32_t cls;
	int rc = uh_obj_class(h, obj, &cls);

	return rc ? rc : uh_field_find(h, cls, name, index);
}

static int read_title(uh_heap *h, uh_off board, const char **s, size_t *len)
{
	uint32_t cls, idx;
	uh_field_info fi;
	uh_off str = 0;
	int rc = uh_obj_class(h, board, &cls);

	if (rc == 0) rc = uh_field_find(h, cls, "title", &idx);
	if (rc == 0) rc = uh_field_info_get(h, cls, idx, &fi);
	if (rc == 0) rc = uh_read(h, board, fi.offset, &str, 8);
	if (rc == 0) rc = uh_string_get(h, str, s, len);
	return rc;
}

/* counter.value += delta in one block; re-run on a conflict. */
static int add(uh_heap *h, uh_off counter, uint32_t f_value, uint32_t f_writer,
	       int64_t delta, int64_t *now)
{
	int rc;

	for (int tries = 0; tries < 100; tries++) {
		int64_t v = 0;
		rc = uh_begin(h);
		if (rc == 0) rc = uh_get_i64(h, counter, f_value, &v);
		if (rc == 0) rc = uh_set_i64(h, counter, f_value, v + delta);
		if (rc == 0) rc = uh_set_i64(h, counter, f_writer, (int64_t)getpid());
		if (rc == 0) rc = uh_commit(h);
		if (rc == 0)
			*now = v + delta;
		else if (uh_in_block(h))
			uh_abort(h);
		if (rc != UH_ECONFLICT)
			break;
	}
	return rc;
}

int main(void)
{
	uh_heap *h = NULL;
	uh_off board = 0, counter = 0;
	uint32_t f_counter, f_value, f_writer;
	const char *title;
	size_t tlen;
	int64_t value = 0, writer = 0, now = 0;
	int rc;

	printf("process 2 (pid %d): connecting to heapd\n", (int)getpid());
	if ((rc = uh_connect(NULL, 0, &h)) != 0)
		return fail("connect", rc);
	if ((rc = uh_root_get(h, "demo.board", &board)) != 0)
		return fail("finding root demo.board", rc);
	if ((rc = read_title(h, board, &title, &tlen)) != 0)
		return fail("reading board.title", rc);
	if ((rc = field(h, board, "counter", &f_counter)) != 0 ||
	    (rc = uh_get_ref(h, board, f_counter, &counter)) != 0)
		return fail("reading board.counter", rc);
	if ((rc = field(h, counter, "value", &f_value)) != 0 ||
	    (rc = field(h, counter, "writer_pid", &f_writer)) != 0)
		return fail("looking up the counter's fields", rc);
	uh_get_i64(h, counter, f_value, &value);
	uh_get_i64(h, counter, f_writer, &writer);
	printf("process 2: found root \"demo.board\": title \"%.*s\", counter = %lld "
	       "(written by pid %lld)\n", (int)tlen, title, (long long)value,
	       (long long)writer);
	if ((rc = add(h, counter, f_value, f_writer, 10, &now)) != 0)
		return fail("updating the counter", rc);
	printf("process 2: added 10 in one atomic block: counter = %lld\n", (long long)now);
	uh_disconnect(h);
	printf("process 2: detached\n");
	return 0;
}
