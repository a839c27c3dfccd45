/*
 * prog_dt_list_mp.c -- one writer of test_dt_list_mp: appends its own
 * tagged values 0..count-1 to the shared list under root "dt_list.mp",
 * each append (or pair of appends, see below) one uh_run block, and
 * acknowledges each committed value by appending its number to an ack
 * file right after uh_run returns (one write(2) on O_APPEND: survives a
 * SIGKILL, never torn).
 *
 *   prog_dt_list_mp --socket S --id P --count M --ack FILE --dir D
 *
 * After connecting it creates D/ready.P and waits for D/go, so that all
 * writers start appending together.
 * Value j of process P: for j % 5 == 4 the string "p<P>.<j>", otherwise
 * the i64 P * 1000000 + j. When j % 7 == 0 (and j + 1 < M), values j and
 * j + 1 are appended in one block: a reader must never see j without
 * j + 1. Exit 0 when done, 1 on an unexpected error (printed).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

struct job {
	uh_off list;
	int64_t p, j, count;
};

static int append_one(uh_heap *h, const struct job *x, int64_t j)
{
	uh_value v = { .type = UH_T_I64 };

	if (j % 5 == 4) {
		char buf[48];
		int n = snprintf(buf, sizeof(buf), "p%lld.%lld", (long long)x->p, (long long)j);
		v.type = UH_T_STRING;
		int rc = uh_string_new(h, buf, (size_t)n, &v.u.ref);
		if (rc)
			return rc;
	} else {
		v.u.i = x->p * 1000000 + j;
	}
	return uh_list_append(h, x->list, &v);
}

static int pair_first(int64_t j, int64_t count)
{
	return j % 7 == 0 && j + 1 < count;
}

static int body(uh_heap *h, void *arg)
{
	const struct job *x = arg;
	int rc = append_one(h, x, x->j);

	if (rc == 0 && pair_first(x->j, x->count))
		rc = append_one(h, x, x->j + 1);
	return rc;
}

static void ack(int fd, int64_t j)
{
	char line[32];
	snprintf(line, sizeof(line), "%lld", (long long)j);
	th_record_append(fd, line);	/* never torn by a SIGKILL */
}

int main(int argc, char **argv)
{
	const char *sock = NULL, *ackp = NULL, *dir = NULL;
	struct job x = { 0 };
	uh_heap *h;
	int rc;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--socket")) sock = argv[i + 1];
		else if (!strcmp(argv[i], "--id")) x.p = atoll(argv[i + 1]);
		else if (!strcmp(argv[i], "--count")) x.count = atoll(argv[i + 1]);
		else if (!strcmp(argv[i], "--ack")) ackp = argv[i + 1];
		else if (!strcmp(argv[i], "--dir")) dir = argv[i + 1];
	}
	if (!sock || !ackp || !dir || x.count <= 0) {
		fprintf(stderr, "usage: prog_dt_list_mp --socket S --id P --count M --ack FILE "
			"--dir D\n");
		return 2;
	}
	int fd = open(ackp, O_WRONLY | O_CREAT | O_APPEND, 0600);
	if (fd < 0 || (rc = uh_connect(sock, 0, &h)) != 0) {
		fprintf(stderr, "prog_dt_list_mp: open/connect failed: %s\n", uh_errmsg());
		return 1;
	}
	if ((rc = uh_root_get(h, "dt_list.mp", &x.list)) != 0) {
		fprintf(stderr, "prog_dt_list_mp: root: %s\n", uh_errmsg());
		return 1;
	}
	char ready[32];
	snprintf(ready, sizeof(ready), "ready.%lld", (long long)x.p);
	if (th_signal_file(dir, ready, NULL) != 0 || th_wait_file(dir, "go", 20000) != 0) {
		fprintf(stderr, "prog_dt_list_mp: no go signal\n");
		return 1;
	}
	for (x.j = 0; x.j < x.count;) {
		rc = uh_run(h, body, &x, 100000);
		if (rc) {
			fprintf(stderr, "prog_dt_list_mp %lld: append %lld: %s: %s\n",
				(long long)x.p, (long long)x.j, uh_strerror(rc), uh_errmsg());
			return 1;
		}
		ack(fd, x.j);
		if (pair_first(x.j, x.count))
			ack(fd, ++x.j);
		x.j++;
	}
	uh_stats st;
	uh_stats_get(h, &st);
	printf("writer %lld: %lld appends, %llu retries, %llu lock waits, %llu read waits\n",
	       (long long)x.p, (long long)x.count, (unsigned long long)st.retries,
	       (unsigned long long)st.lock_waits, (unsigned long long)st.read_waits);
	uh_disconnect(h);
	return 0;
}
