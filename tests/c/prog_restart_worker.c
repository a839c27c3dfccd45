/*
 * prog_restart_worker.c -- a client with no reconnect logic, for the test
 * of heapd restarts under load (bindings-python/tests/test_heapd_restart.py).
 *
 *   prog_restart_worker --socket S --name W --ack FILE --stop FILE
 *
 * Root "rs.<W>": a list; op i (1, 2, ...) is one uh_run block that checks
 * the list's length is i - 1, appends i, and adds 1 to the shared counter
 * (root "rs.count", an array of one i64): then "i r" goes to the ack file
 * (r: the re-attaches so far).
 * Runs until the stop file exists, then prints
 *   ops=<n> reattaches=<r> reattach_ms_max=<m> reattach_ms_total=<t>
 * (the longest uh_run call that re-attached, and the time spent in
 * re-attaches) and exits 0; exit 2 on any error.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "uniheap.h"

struct ctx {
	uh_off list, count;
	int64_t i;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *what, int rc)
{
	fprintf(stderr, "prog_restart_worker: %s: %s: %s\n", what, uh_strerror(rc), uh_errmsg());
	exit(2);
}

static int op_body(uh_heap *h, void *p)
{
	struct ctx *c = p;
	uh_value v = { .type = UH_T_I64, .u.i = c->i };
	uint64_t len;
	int rc;

	if ((rc = uh_list_len(h, c->list, &len)) != 0)
		return rc;
	if ((int64_t)len != c->i - 1) {
		fprintf(stderr, "prog_restart_worker: the list has %llu elements before op %lld\n",
			(unsigned long long)len, (long long)c->i);
		return UH_EINTERNAL;
	}
	if ((rc = uh_list_append(h, c->list, &v)) != 0 ||
	    (rc = uh_array_get(h, c->count, 0, &v)) != 0)
		return rc;
	v.u.i++;
	return uh_array_set(h, c->count, 0, &v, 0);
}

static int setup_body(uh_heap *h, void *p)
{
	const char *name = p;
	uh_off l, a;
	int rc;

	if (uh_root_get(h, name, &l) == 0)
		return 0;
	if ((rc = uh_list_new(h, &l)) != 0 || (rc = uh_root_set(h, name, l)) != 0)
		return rc;
	if (uh_root_get(h, "rs.count", &a) == 0)
		return 0;
	if ((rc = uh_array_new(h, UH_T_I64, 1, &a)) != 0)
		return rc;
	return uh_root_set(h, "rs.count", a);
}

int main(int argc, char **argv)
{
	const char *sock = NULL, *name = NULL, *ack = NULL, *stop = NULL;
	char root[128], line[32];
	struct ctx c = { 0 };
	uint64_t max_ns = 0;
	uh_stats st;
	uh_heap *h;
	int rc;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--socket")) sock = argv[i + 1];
		else if (!strcmp(argv[i], "--name")) name = argv[i + 1];
		else if (!strcmp(argv[i], "--ack")) ack = argv[i + 1];
		else if (!strcmp(argv[i], "--stop")) stop = argv[i + 1];
	}
	if (!sock || !name || !ack || !stop)
		die("usage: --socket S --name W --ack FILE --stop FILE", UH_EINVAL);
	int fd = open(ack, O_WRONLY | O_CREAT | O_APPEND, 0600);
	if (fd < 0)
		die("open the ack file", UH_EIO);
	if ((rc = uh_connect(sock, 0, &h)) != 0)
		die("uh_connect", rc);
	snprintf(root, sizeof(root), "rs.%s", name);
	if ((rc = uh_run(h, setup_body, root, 0)) != 0)
		die("setup", rc);
	if ((rc = uh_root_get(h, root, &c.list)) != 0 ||
	    (rc = uh_root_get(h, "rs.count", &c.count)) != 0)
		die("roots", rc);
	while (access(stop, F_OK) != 0) {	/* bound: the test creates the stop file */
		uh_stats s0;
		uh_stats_get(h, &s0);
		uint64_t t0 = now_ns();
		c.i++;
		if ((rc = uh_run(h, op_body, &c, 0)) != 0)
			die("op", rc);
		uh_stats_get(h, &st);
		if (st.reattaches != s0.reattaches && now_ns() - t0 > max_ns)
			max_ns = now_ns() - t0;
		int n = snprintf(line, sizeof(line), "%lld %llu\n", (long long)c.i,
				 (unsigned long long)st.reattaches);
		if (write(fd, line, (size_t)n) != n)
			die("ack write", UH_EIO);
		usleep(1000);
	}
	uh_stats_get(h, &st);
	printf("ops=%lld reattaches=%llu reattach_ms_max=%.1f reattach_ms_total=%.1f\n",
	       (long long)c.i, (unsigned long long)st.reattaches, max_ns / 1e6,
	       st.reattach_ns / 1e6);
	uh_disconnect(h);
	close(fd);
	return 0;
}
