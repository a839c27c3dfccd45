/*
 * harness.h -- what every C test of uniheap shares: start/stop a private
 * heapd on a fresh temporary heap, spawn and wait for child programs, and
 * non-aborting assertions that count failures.
 *
 * Cleanup contract: every heapd started and every process spawned through
 * this harness is recorded by pid. At exit (normal, or on SIGINT, SIGTERM,
 * SIGHUP, SIGABRT, SIGSEGV) the harness kills exactly those pids and
 * removes the temporary directories it made. heapd also gets
 * PR_SET_PDEATHSIG, so a test killed with SIGKILL (ctest timeout) does not
 * leave a daemon behind. Nothing is ever killed by name.
 */
#ifndef UH_TEST_HARNESS_H
#define UH_TEST_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "uniheap.h"

#ifdef __cplusplus
extern "C" {
#endif

struct th_heapd {
	pid_t pid;		/* 0 when not running */
	char dir[512];		/* heap folder; "" = make a fresh temp dir */
	char heap[600];		/* <dir>/heap.uh */
	char sock[600];		/* <dir>/heapd.sock */
	char log[600];		/* <dir>/heapd.log: heapd's stderr, appended */
	uint64_t serving_ms;	/* th_now_ms() when the socket first accepted */
	int no_recovery_wait;	/* th_heapd_start returns once heapd serves */
};

/*
 * Start heapd. If d->dir is empty: make a fresh temp dir (mkdtemp under
 * $TMPDIR, else /dev/shm, else /tmp; prefix "uniheap-test-") and create
 * the heap there (heap.uh, 64M unless extra_args says --size, --durability
 * memory unless extra_args says otherwise); else reopen the heap in d->dir
 * (it is created if the file is missing). extra_args: NULL or a
 * space-separated string of more heapd arguments. Waits (<= 10 s) until
 * the socket accepts connections or heapd exits; then, unless
 * d->no_recovery_wait or $UNIHEAP_GC_STOP_AT, until a recovery that left
 * its mark to an online cycle (FORMAT.md 9.4) has seen that cycle end, so
 * that what `heapctl status` says of the recovery is known.
 * @return 0, or -1 with the reason and the log tail printed to stderr.
 */
int th_heapd_start(struct th_heapd *d, const char *extra_args);
/* SIGTERM, waitpid, SIGKILL after 5 s. No-op when not running. */
void th_heapd_stop(struct th_heapd *d);
/* SIGKILL + waitpid. No-op when not running. */
void th_heapd_kill(struct th_heapd *d);
/* stop + start on the same heap, with the extra_args of the last start. */
int th_heapd_restart(struct th_heapd *d);
/* Stop if running, remove d->dir and everything in it. */
void th_heapd_cleanup(struct th_heapd *d);
/* Print the last maxbytes of heapd's log to stderr (for diagnostics). */
void th_heapd_log_tail(const struct th_heapd *d, size_t maxbytes);

/* uh_connect() to d's socket; prints the error and returns it on failure.
 * Not in uhtest_raw (the harness for raw-gRPC tests, without libuniheap). */
int th_connect(const struct th_heapd *d, uint32_t flags, uh_heap **out);

/*
 * fork+exec argv (argv[0] = path); env: NULL or NULL-terminated "K=V"
 * strings added to (or replacing in) the environment. The child is
 * recorded and killed if the test exits before waiting for it.
 * @return the pid, or -1 (message printed).
 */
pid_t th_spawn(char *const argv[], char *const env[]);
/* Wait for pid. @return its exit code, or 128+signal. -1 on error. */
int th_wait_exit(pid_t pid);
/* Like th_wait_exit() but gives up after timeout_ms: then returns -2 and
 * the process is still running. */
int th_wait_exit_timeout(pid_t pid, int timeout_ms);
/* SIGKILL a pid this harness spawned, and reap it. @return 128+9 usually. */
int th_kill(pid_t pid);
/* Run argv, capture stdout+stderr into out (NUL terminated, truncated to
 * outlen-1), return the exit code (or 128+signal, -1 on spawn error). */
int th_run_capture(char *const argv[], char *out, size_t outlen);
/* Run heapctl against d: args is a space-separated string of heapctl
 * arguments after "--socket <sock>". Same return as th_run_capture(). */
int th_heapctl(const struct th_heapd *d, const char *args, char *out, size_t outlen);

/* Path of a built program: "heapd", "heapctl" or a tests/c prog_*. The
 * pointer is to a static buffer per call slot (8 rotating slots). */
const char *th_bin(const char *name);

/* Append text (without its newline) to fd as one fixed-size record of
 * TH_RECORD_LEN bytes: text, spaces, '\n'. A write(2) can stop between
 * two pages when the process is SIGKILLed; records that divide the page
 * size never cross one, so an ack file written this way is never torn.
 * Exits the process (status 1) if the text does not fit or the write
 * fails. */
/* A 64-bit bit mixer (splitmix64's finalizer): turns (writer, step)
 * numbers into well-spread pseudo-random choices the checkers can recompute. */
/* The next value of a xorshift64 generator with state *s (not 0): the
 * tests' and benchmarks' cheap, repeatable random numbers. */
static inline uint64_t th_xorshift64(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static inline uint64_t th_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

#define TH_RECORD_LEN 64
void th_record_append(int fd, const char *text);

/* Create <dir>/<name> atomically (temp file + rename, so a poller never
 * sees it half written) with text as contents (NULL: empty).
 * @return 0 or -1. Used by processes to say "ready" to each other. */
int th_signal_file(const char *dir, const char *name, const char *text);
/* Wait up to timeout_ms for <dir>/<name> to exist. @return 0 or -1. */
int th_wait_file(const char *dir, const char *name, int timeout_ms);

/* Milliseconds from a monotonic clock. */
uint64_t th_now_ms(void);
void th_sleep_ms(unsigned ms);

/* Extract the unsigned integer after "key" + one of ':' '=' ' ' (and
 * optional quotes/spaces) in text, e.g. th_find_u64(out, "sessions_reaped").
 * @return 0 and *v, or -1 when absent. */
int th_find_u64(const char *text, const char *key, uint64_t *v);
/* The number at key in `heapctl --json status` of heapd d; a failed
 * check (and UINT64_MAX) when heapctl fails or key is absent. */
uint64_t th_status_u64(const struct th_heapd *d, const char *key);

/* Lines in the file at path (0 if it does not exist): how the workloads'
 * acknowledgement files are read. */
long th_count_lines(const char *path);

/* ---- assertions: count, print, never abort ---- */
extern int th_passed, th_failed;
void th_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define TH_CHECK(expr)							\
	do {								\
		if (expr)						\
			th_passed++;					\
		else							\
			th_fail(__FILE__, __LINE__, "%s", #expr);	\
	} while (0)

/* call must return 0; prints uh_strerror + uh_errmsg() otherwise. */
/* (needs libuniheap: not for uhtest_raw users) */
#define TH_CHECK_RC(call)						\
	do {								\
		int th_rc_ = (call);					\
		if (th_rc_ == 0)					\
			th_passed++;					\
		else							\
			th_fail(__FILE__, __LINE__, "%s -> %d %s: %s",	\
				#call, th_rc_, uh_strerror(th_rc_),	\
				uh_errmsg());				\
	} while (0)

/* call must return exactly want (an UH_E* code). */
#define TH_CHECK_ERR(call, want)					\
	do {								\
		int th_rc_ = (call);					\
		if (th_rc_ == (want))					\
			th_passed++;					\
		else							\
			th_fail(__FILE__, __LINE__,			\
				"%s -> %d (%s), want %d (%s): %s",	\
				#call, th_rc_, uh_strerror(th_rc_),	\
				(want), uh_strerror(want), uh_errmsg());\
	} while (0)

/* Two integers must be equal; prints both. */
#define TH_CHECK_EQ(a, b)						\
	do {								\
		long long th_a_ = (long long)(a);			\
		long long th_b_ = (long long)(b);			\
		if (th_a_ == th_b_)					\
			th_passed++;					\
		else							\
			th_fail(__FILE__, __LINE__, "%s == %s (%lld != %lld)", \
				#a, #b, th_a_, th_b_);			\
	} while (0)

/* The whole file at path in a malloc'd buffer (one byte more, a NUL
 * after the content), its length in *len; NULL if it cannot be read
 * whole. */
char *th_read_file(const char *path, size_t *len);

/* Copy file from to file to (created 0600, or truncated): 0 or -1. */
int th_copy_file(const char *from, const char *to);

/* Offset of the heap header in the image of a heap file (the root object
 * after libpmemobj's allocation header: 16-byte aligned, not necessarily
 * 64; found by its magic and self_off, FORMAT.md 2), or -1. */
long th_find_uh_header(const char *img, size_t len);

/* Objects in the arenas of a heap file's image (heapd stopped): those
 * with the valid bit (*valid) and, of every slot, those whose lock word is
 * locked (*locked). 0, or -1 if the image has no heap header or an arena
 * of its directory lies outside it. */
int th_count_objects(const char *img, size_t len, uint64_t *valid, uint64_t *locked);

/* The chunk map of a grown heap's image (heapd stopped; FORMAT.md 1.1)
 * against what owns its chunks: a chunk's bit is set iff one arena of
 * the directory, or one active session's log area or log extent, covers
 * it, and no chunk is covered twice. 0 (with *log_chunks, the chunks of
 * logs), or -1. */
int th_check_chunks(const char *img, size_t len, uint64_t *log_chunks);

/* Print "<suite>: N passed, N failed" on its own line.
 * @return 0 if none failed, else 1 (use as the exit code). */
int th_summary(const char *suite);

#ifdef __cplusplus
}
#endif

#endif /* UH_TEST_HARNESS_H */
