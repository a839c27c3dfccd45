/*
 * test_crash_grow.c -- enumerated crash points of a heap's growth
 * (FORMAT.md 1.1): heapd is killed at every crash point of the growth work
 * a filling client causes, restarted on the same file, and what must
 * survive does.
 *
 * The template is a fresh 16M heap that may grow to 256M. A client
 * (prog_grow_crash fill) publishes blocks of 200 64-byte records,
 * acknowledging each in a file once committed; past a quarter of the pool
 * in arenas, leases go to the extension, so heapd grows the file on
 * demand and places arenas there. heapd's test hook
 * UNIHEAP_GROW_CRASH_AT=k SIGKILLs it right before the k-th crash point of
 * that work (growcrash.c: after the fallocate, after the fsync, after the
 * map, inside and after the publishing transaction; for an arena placed
 * in the extension, after its chunks are zeroed, after its header is
 * persisted, after its transaction). The uncrashed run, armed with a k it
 * never reaches, counts them (its event=grow_crash_point lines), and every
 * k in 1..N is run: heapd killed there and restarted on the same file; the
 * client outlives it, re-attaches, runs the block the restart rolled back
 * again and publishes the rest of its blocks. Then: heapd opened at a
 * size the uncrashed run had (the template's, or one it grew to: never
 * torn), the file is exactly that long (a longer one, an unpublished
 * growth, was trimmed), uh_heap_check (heapctl check) is sound, every
 * acknowledged block is there with its content (all of the fill's, so a
 * growth the crash undid was done again), a new client fills 20 blocks
 * more, and the heap grows once more on heapctl grow; after each step
 * the heap is sound, every block of both fills acknowledged there, and the
 * file as long as the size.
 *
 * Knobs: UH_GROW_CRASH_BLOCKS=n blocks of the fill (default 100, about
 * 1.3 MiB: one growth and five arenas in the extension; more: more
 * arenas, more crash points; 400 gives 35), UH_GROW_CRASH_MAX=k only the
 * first k points.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

#define SUITE "test_crash_grow"
#define HEAPD_ARGS "--size 16M --max-size 256M --gc-every off --gc-fill off"
#define MIB (1ull << 20)
#define KILLED (128 + SIGKILL)
#define NEVER "1000000000"	/* a crash point no run reaches: the hook counts */
#define MAX_SIZES 64

static struct th_heapd d;
static char tmpl[700], ack[700], blocks[32];
static char out[1 << 16];
static uint64_t sizes[MAX_SIZES];	/* the template's and each growth's of the uncrashed run */
static int nsizes;

static uint64_t file_len(void)
{
	struct stat st;
	return stat(d.heap, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static int make_template(void)
{
	if (th_heapd_start(&d, HEAPD_ARGS) != 0)
		return -1;
	th_heapd_stop(&d);
	snprintf(tmpl, sizeof(tmpl), "%s/template.uh", d.dir);
	snprintf(ack, sizeof(ack), "%s/ack", d.dir);
	return rename(d.heap, tmpl);
}

/* Each line of heapd's log (it starts empty with each run) that holds
 * what, passed to fn. */
static void log_lines(const char *what, void (*fn)(const char *line, void *arg), void *arg)
{
	size_t len;
	char *log = th_read_file(d.log, &len);
	for (char *p = log ? strtok(log, "\n") : NULL; p; p = strtok(NULL, "\n"))
		if (strstr(p, what))
			fn(p, arg);
	free(log);
}

static void count_line(const char *line, void *arg)
{
	(void)line;
	(*(long *)arg)++;
}

static void print_line(const char *line, void *arg)
{
	(void)arg;
	printf("  %s\n", line);
}

static void size_line(const char *line, void *arg)
{
	uint64_t to;
	(void)arg;
	if (strstr(line, " to=") && th_find_u64(line, "to", &to) == 0 && nsizes < MAX_SIZES)
		sizes[nsizes++] = to;
}

static void trim_line(const char *line, void *arg)
{
	uint64_t t = 0;
	if (th_find_u64(line, "trimmed", &t) == 0)
		*(uint64_t *)arg += t;
}

static int known_size(uint64_t s)
{
	for (int i = 0; i < nsizes; i++)
		if (sizes[i] == s)
			return 1;
	return 0;
}

/* Run the fill to its end: its exit code. */
static int fill(const char *first, const char *n, const char *what)
{
	char *argv[] = { (char *)th_bin("prog_grow_crash"), "fill", d.sock, ack, (char *)first,
			 (char *)n, NULL };
	int rc = th_run_capture(argv, out, sizeof(out));
	if (rc)
		th_fail(__FILE__, __LINE__, "%s: fill from %s: exit %d: %s", what, first, rc, out);
	return rc;
}

/* Sound, every acknowledged block whole, the file as long as the size. */
static int heap_ok(const char *what)
{
	char *argv[] = { (char *)th_bin("prog_grow_crash"), "check", d.sock, ack, NULL };
	int rc = th_run_capture(argv, out, sizeof(out));
	if (rc) {
		th_fail(__FILE__, __LINE__, "%s: acknowledged blocks: %s", what, out);
		return -1;
	}
	rc = th_heapctl(&d, "check", out, sizeof(out));
	if (rc) {
		th_fail(__FILE__, __LINE__, "%s: heapctl check -> %d: %s", what, rc, out);
		return -1;
	}
	uint64_t size = th_status_u64(&d, "heap_size"), len = file_len();
	if (size != len) {
		th_fail(__FILE__, __LINE__, "%s: heap_size %llu, file %llu bytes", what,
			(unsigned long long)size, (unsigned long long)len);
		return -1;
	}
	return 0;
}

static int fresh_heapd(const char *k)
{
	th_heapd_stop(&d);
	unlink(d.log);
	unlink(ack);
	if (th_copy_file(tmpl, d.heap) != 0)
		return -1;
	setenv("UNIHEAP_GROW_CRASH_AT", k, 1);
	int rc = th_heapd_start(&d, HEAPD_ARGS);
	unsetenv("UNIHEAP_GROW_CRASH_AT");
	return rc;
}

/* The uncrashed run: its crash points and the sizes it grew to. */
static long uncrashed(void)
{
	long n = 0;
	if (fresh_heapd(NEVER) != 0 || fill("0", blocks, "uncrashed") != 0 || heap_ok("uncrashed") != 0)
		return -1;
	log_lines("event=grow_crash_point ", count_line, &n);
	log_lines("event=grow_crash_point ", print_line, NULL);
	sizes[nsizes++] = 16 * MIB;
	log_lines("event=grow ", size_line, NULL);
	printf("uncrashed: %s blocks, %d sizes, file %llu bytes, %ld crash points\n", blocks,
	       nsizes, (unsigned long long)file_len(), n);
	th_heapd_stop(&d);
	return n;
}

/* heapd killed at point k under the fill, restarted, checked, filled
 * again. */
static int crash_at(long k)
{
	char what[64], env[32];
	snprintf(what, sizeof(what), "k=%ld", k);
	snprintf(env, sizeof(env), "%ld", k);
	if (fresh_heapd(env) != 0) {
		th_fail(__FILE__, __LINE__, "%s: heapd start", what);
		return -1;
	}
	char *argv[] = { (char *)th_bin("prog_grow_crash"), "fill", d.sock, ack, "0", blocks,
			 NULL };
	pid_t client = th_spawn(argv, NULL);
	int rc = th_wait_exit_timeout(d.pid, 120000);
	if (rc == -2)
		rc = th_kill(d.pid);
	d.pid = 0;
	long hit = 0;
	log_lines("crash=1", count_line, &hit);
	if (rc != KILLED || hit != 1) {
		th_fail(__FILE__, __LINE__, "%s: heapd exit %d (want %d by the hook)", what, rc,
			KILLED);
		th_heapd_log_tail(&d, 3000);
		th_kill(client);
		return -1;
	}
	log_lines("crash=1", print_line, NULL);
	uint64_t len_killed = file_len();
	if (th_heapd_start(&d, HEAPD_ARGS) != 0) {
		th_fail(__FILE__, __LINE__, "%s: heapd did not restart", what);
		th_kill(client);
		return -1;
	}
	/* The size heapd opened at: the file's, less what its open trimmed
	 * (the client may grow the heap again at once). */
	uint64_t trimmed = 0;
	log_lines("reason=unpublished_growth", trim_line, &trimmed);
	uint64_t size = len_killed - trimmed;
	/* The client outlived heapd: it re-attaches and publishes the rest. */
	int crc = th_wait_exit_timeout(client, 90000);
	if (crc == -2)
		crc = th_kill(client);
	if (crc != 0) {
		th_fail(__FILE__, __LINE__, "%s: the client across the restart: exit %d", what, crc);
		return -1;
	}
	if (!known_size(size)) {
		th_fail(__FILE__, __LINE__, "%s: heapd opened at %llu bytes, a size the uncrashed "
			"run never had", what, (unsigned long long)size);
		return -1;
	}
	if (heap_ok(what) != 0)
		return -1;
	printf("%s: file %llu bytes at the crash, reopened at %llu, %ld blocks acknowledged\n",
	       what, (unsigned long long)len_killed, (unsigned long long)size, th_count_lines(ack));
	if (fill("100000", "20", what) != 0 || heap_ok(what) != 0)
		return -1;
	uint64_t grown = th_status_u64(&d, "heap_size");
	if (grown <= 16 * MIB || grown < size) {
		th_fail(__FILE__, __LINE__, "%s: the heap did not grow again: %llu bytes", what,
			(unsigned long long)grown);
		return -1;
	}
	/* And once more on request, past whatever the fill left. */
	char args[64];
	snprintf(args, sizeof(args), "grow %lluM", (unsigned long long)(grown / MIB + 2));
	if (th_heapctl(&d, args, out, sizeof(out)) != 0 ||
	    th_status_u64(&d, "heap_size") <= grown || heap_ok(what) != 0) {
		th_fail(__FILE__, __LINE__, "%s: heapctl %s: %s", what, args, out);
		return -1;
	}
	th_heapd_stop(&d);
	return 0;
}

int main(void)
{
	const char *b = getenv("UH_GROW_CRASH_BLOCKS"), *m = getenv("UH_GROW_CRASH_MAX");
	uint64_t t0 = th_now_ms();
	snprintf(blocks, sizeof(blocks), "%ld", b ? atol(b) : 100);
	if (make_template() != 0) {
		th_fail(__FILE__, __LINE__, "could not make the template heap");
		th_heapd_cleanup(&d);
		return th_summary(SUITE);
	}
	long n = uncrashed();
	/* Five in the growth, three in each arena placed in the extension. */
	TH_CHECK(n >= 5 + 3);
	if (m && atol(m) > 0 && atol(m) < n)
		n = atol(m);
	for (long k = 1; k <= n; k++) {
		int before = th_failed;
		if (crash_at(k) == 0)
			th_passed++;
		if (th_failed != before)
			fprintf(stderr, "crash point k=%ld failed (UNIHEAP_GROW_CRASH_AT=%ld)\n", k, k);
		th_heapd_stop(&d);
		fflush(stdout);
	}
	printf("%ld crash points of growth checked in %llu ms\n", n > 0 ? n : 0,
	       (unsigned long long)(th_now_ms() - t0));
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
