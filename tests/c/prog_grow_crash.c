/*
 * prog_grow_crash.c -- the workload and checker of test_crash_grow and
 * test_powerloss_grow: a client that fills a heap in acknowledged blocks,
 * so that heapd grows it (FORMAT.md 1.1), and one that checks them.
 * Usage: prog_grow_crash fill <socket> <ack> <first> <blocks>
 *        prog_grow_crash check <socket> <ack>
 *
 * fill: publishes blocks first .. first + blocks - 1, block k a chain of
 *   REC records of class GrowCrash (64-byte slots) whose values are
 *   k * 1000 + i, under the root "g.<k>", each in one block (uh_begin ..
 *   uh_commit); after each commit appends "k\n" to <ack> (one write(2)
 *   on an O_APPEND descriptor) and the same bytes as a power-loss mark
 *   (pl_mark; a no-op unless traced). A block that heapd's restart rolled
 *   back (UH_ECONFLICT) runs again, after the client re-attached, for
 *   about 30 s at most. Prints "blocks N"; exits 0, or 1 at the first
 *   other error, after printing it.
 * check: for every whole line k of <ack>: root "g.<k>" is there, its
 *   chain has REC records with their values. Prints "checked N"; exits 0
 *   when every acknowledged block is whole.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "powerloss.h"
#include "chain_block.h"

#define REC 200	/* records per block: 200 x 64 bytes */
#define RETRIES 300	/* runs of a block rolled back by a restart: 30 s and more */

static uint32_t cls;

static int64_t value(int64_t k, int i)
{
	return k * 1000 + i;
}

static int publish_once(uh_heap *h, int64_t k)
{
	char name[64];
	snprintf(name, sizeof(name), "g.%lld", (long long)k);
	return chain_block(h, cls, name, REC, value(k, 0));
}

/* A block rolled back because heapd restarted under it (UH_ECONFLICT)
 * runs again: the next one re-attaches to the new heapd. */
static int publish(uh_heap *h, int64_t k)
{
	int rc = UH_ECONFLICT;
	for (int attempt = 0; attempt < RETRIES && rc == UH_ECONFLICT; attempt++) {	/* bound: RETRIES */
		if (attempt)
			usleep(100000);
		rc = publish_once(h, k);
	}
	return rc;
}

static int do_fill(uh_heap *h, const char *ack, int64_t first, int64_t blocks)
{
	int fd = open(ack, O_WRONLY | O_CREAT | O_APPEND, 0600), rc = 0;
	int64_t k = first;
	if (fd < 0) {
		perror(ack);
		return 1;
	}
	for (; k < first + blocks && (rc = publish(h, k)) == 0; k++) {	/* bound: blocks */
		char line[32];
		int n = snprintf(line, sizeof(line), "%lld\n", (long long)k);
		if (write(fd, line, (size_t)n) != n) {
			perror(ack);
			rc = 1;
			break;
		}
		pl_mark(line, (size_t)n);
	}
	close(fd);
	printf("blocks %lld\n", (long long)(k - first));
	if (rc)
		printf("error at block %lld: %s\n", (long long)k, uh_errmsg());
	return rc ? 1 : 0;
}

/* 0 when block k is there, whole. */
static int check_block(uh_heap *h, int64_t k)
{
	char name[64];
	uh_off o = 0;
	int n = 0;
	snprintf(name, sizeof(name), "g.%lld", (long long)k);
	if (uh_root_get(h, name, &o) != 0 || !o) {
		printf("%s: acknowledged, missing: %s\n", name, uh_errmsg());
		return -1;
	}
	while (o && n <= REC) {	/* bound: REC records and one too many */
		int64_t v = 0;
		if (uh_get_i64(h, o, 0, &v) != 0 || v != value(k, REC - 1 - n)) {
			printf("%s record %d: value %lld: %s\n", name, n, (long long)v,
			       uh_errmsg());
			return -1;
		}
		n++;
		if (uh_get_ref(h, o, 1, &o) != 0)
			return -1;
	}
	if (n != REC)
		printf("%s: %d records\n", name, n);
	return n == REC ? 0 : -1;
}

static int do_check(uh_heap *h, const char *ack)
{
	size_t len = 0;
	char *text = th_read_file(ack, &len), *p = text;
	long n = 0, bad = 0;
	while (p && p < text + len) {	/* bound: the file's lines */
		char *nl = memchr(p, '\n', (size_t)(text + len - p));
		if (!nl)
			break;	/* a line cut by the crash: not acknowledged */
		bad += check_block(h, atoll(p)) != 0;
		n++;
		p = nl + 1;
	}
	free(text);
	printf("checked %ld bad %ld\n", n, bad);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	uh_heap *h = NULL;
	int fill = argc == 6 && !strcmp(argv[1], "fill");
	if (!fill && !(argc == 4 && !strcmp(argv[1], "check"))) {
		fprintf(stderr, "usage: prog_grow_crash fill SOCKET ACK FIRST BLOCKS | "
			"check SOCKET ACK\n");
		return 2;
	}
	if (uh_connect(argv[2], fill ? 0 : UH_READONLY, &h) != 0) {
		printf("connect: %s\n", uh_errmsg());
		return 1;
	}
	uh_field_spec f[] = { { "value", UH_T_I64, 0 }, { "next", UH_T_REF, 0 },
			      { "a", UH_T_I64, 0 }, { "b", UH_T_I64, 0 },
			      { "c", UH_T_I64, 0 }, { "d", UH_T_I64, 0 } };
	int rc = fill ? uh_class_register(h, "GrowCrash", f, 6, &cls) : 0;
	if (rc)
		printf("class: %s\n", uh_errmsg());
	else if (fill)
		rc = do_fill(h, argv[3], atoll(argv[4]), atoll(argv[5]));
	else
		rc = do_check(h, argv[3]);
	fflush(stdout);
	uh_disconnect(h);
	return rc;
}
