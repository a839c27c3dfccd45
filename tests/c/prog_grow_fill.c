/*
 * prog_grow_fill.c -- a writer or the reader of test_grow_fill, on a heap
 * that grows while they run (FORMAT.md 1.1).
 * Usage: prog_grow_fill <socket> write <id> <blocks>
 *        prog_grow_fill <socket> read <writers> <dir>
 *        prog_grow_fill <socket> drop <id> <blocks>
 *
 * write: publishes <blocks> blocks (0 = until the heap is full), block k
 *   a chain of REC records of class GrowFill whose values are
 *   id * 1e9 + k * 1000 + i, under the root "w<id>.<k>"; prints "blocks
 *   N" with the number acknowledged (committed), and the message of the
 *   HeapFull that ended it, if one did. Exits 0, or 3 after HeapFull.
 * read: read-only; follows every writer's blocks in order while they are
 *   published and checks each whole chain; once <dir>/done exists, one
 *   more pass, then prints "read N" and exits 0 if every check passed.
 * drop: removes the roots of writer <id>'s first <blocks> blocks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "chain_block.h"

#define REC 200	/* records per block */
#define MAXW 8	/* writers the reader follows */

static uint32_t cls;

static int64_t value(int id, int64_t k, int i)
{
	return (int64_t)id * 1000000000 + k * 1000 + i;
}

static int publish(uh_heap *h, int id, int64_t k)
{
	char name[64];
	snprintf(name, sizeof(name), "w%d.%lld", id, (long long)k);
	for (int attempt = 0; attempt < 20; attempt++) {	/* bound: conflicts on the root map */
		int rc = chain_block(h, cls, name, REC, value(id, k, 0));
		if (rc != UH_ECONFLICT)
			return rc;
	}
	return UH_ECONFLICT;
}

static int do_write(uh_heap *h, int id, int64_t blocks)
{
	int64_t k = 0;
	int rc = 0;
	while ((blocks == 0 || k < blocks) && (rc = publish(h, id, k)) == 0)	/* bound: blocks, or a full heap */
		k++;
	printf("blocks %lld\n", (long long)k);
	if (rc == UH_ENOSPC) {
		printf("full: %s\n", uh_errmsg());
		return 3;
	}
	if (rc)
		fprintf(stderr, "writer %d, block %lld: %s\n", id, (long long)k, uh_errmsg());
	return rc ? 1 : 0;
}

/* 1: block k of writer id is published and whole; 0: not published yet;
 * -1: published but wrong. */
static int read_block(uh_heap *h, int id, int64_t k)
{
	char name[64];
	uh_off o = 0;
	snprintf(name, sizeof(name), "w%d.%lld", id, (long long)k);
	if (uh_root_get(h, name, &o) != 0)
		return 0;
	int n = 0;
	while (o && n <= REC) {	/* bound: REC records and one too many */
		int64_t v = 0;
		if (uh_get_i64(h, o, 0, &v) != 0 || v != value(id, k, REC - 1 - n)) {
			fprintf(stderr, "%s record %d: %s\n", name, n, uh_errmsg());
			return -1;
		}
		n++;
		if (uh_get_ref(h, o, 1, &o) != 0)
			return -1;
	}
	if (n != REC)
		fprintf(stderr, "%s: %d records\n", name, n);
	return n == REC ? 1 : -1;
}

static int do_read(uh_heap *h, int writers, const char *dir)
{
	int64_t next[MAXW] = { 0 }, total = 0;
	char done[600];
	snprintf(done, sizeof(done), "%s/done", dir);
	for (int last = 0; !last;) {	/* bound: until done, then one pass */
		last = access(done, F_OK) == 0;
		for (int id = 0; id < writers; id++) {	/* bound: writers */
			int r;
			while ((r = read_block(h, id, next[id])) == 1) {	/* bound: published blocks */
				next[id]++;
				total++;
			}
			if (r < 0)
				return 1;
		}
		if (!last)
			usleep(2000);
	}
	printf("read %lld\n", (long long)total);
	return 0;
}

static int do_drop(uh_heap *h, int id, int64_t blocks)
{
	char name[64];
	for (int64_t k = 0; k < blocks; k++) {	/* bound: blocks */
		snprintf(name, sizeof(name), "w%d.%lld", id, (long long)k);
		if (uh_root_del(h, name) != 0) {
			fprintf(stderr, "%s: %s\n", name, uh_errmsg());
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	uh_heap *h = NULL;
	if (argc != 5) {
		fprintf(stderr, "usage: prog_grow_fill SOCKET write|read|drop N M\n");
		return 2;
	}
	int reader = strcmp(argv[2], "read") == 0;
	if (uh_connect(argv[1], reader ? UH_READONLY : 0, &h) != 0) {
		fprintf(stderr, "connect: %s\n", uh_errmsg());
		return 1;
	}
	uh_field_spec f[] = { { "value", UH_T_I64, 0 }, { "next", UH_T_REF, 0 },
			      { "a", UH_T_I64, 0 }, { "b", UH_T_I64, 0 },
			      { "c", UH_T_I64, 0 }, { "d", UH_T_I64, 0 } };
	int rc = reader ? 0 : uh_class_register(h, "GrowFill", f, 6, &cls);
	if (rc)
		fprintf(stderr, "class: %s\n", uh_errmsg());
	else if (!strcmp(argv[2], "write"))
		rc = do_write(h, atoi(argv[3]), atoll(argv[4]));
	else if (reader)
		rc = do_read(h, atoi(argv[3]) < MAXW ? atoi(argv[3]) : MAXW, argv[4]);
	else if (!strcmp(argv[2], "drop"))
		rc = do_drop(h, atoi(argv[3]), atoll(argv[4]));
	else
		rc = 2;
	fflush(stdout);
	uh_disconnect(h);
	return rc;
}
