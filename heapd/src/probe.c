/*
 * probe.c -- let a sacrificial child try a pool before heapd opens it.
 *
 * libpmemobj trusts its own metadata: on some damaged files (a changed
 * byte in the pool header, a lane's log or an allocator header)
 * pmemobj_open and pmemobj_check die by SIGSEGV or SIGFPE, or never
 * return. heapd must refuse such a file with a message instead of dying,
 * so before it opens a pool it forks a child that runs pmemobj_check on
 * it: a copy-on-write open (the file is not changed), libpmemobj's own
 * recovery of its lanes, then its consistency check of the pool header,
 * the lanes and every zone and chunk header. A child that dies, hangs or
 * finds the metadata inconsistent tells heapd the file is damaged; one
 * that cannot open the pool (in use, not a pool, truncated) leaves the
 * explanation to pmemobj_open, whose failures heapd already words.
 *
 * The probe costs one copy-on-write open: milliseconds, whatever the
 * size of the heap. It runs before heapd starts any thread, so fork is
 * safe.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core.h"

/* How long the child may take. pmemobj_check reads the metadata only
 * (a few MiB even for a large pool), so this is far more than a sound
 * pool needs; a damaged one can make libpmemobj loop. */
#define PROBE_TIMEOUT_MS 30000

enum { PROBE_SOUND = 0, PROBE_INCONSISTENT = 1, PROBE_NO_OPEN = 2 };

static void probe_child(const char *path)
{
	int rc = pmemobj_check(path, UH_LAYOUT_NAME);

	_exit(rc == 1 ? PROBE_SOUND : rc == 0 ? PROBE_INCONSISTENT : PROBE_NO_OPEN);
}

/* Wait for the child at most PROBE_TIMEOUT_MS; kill it after that.
 * Returns its wait status, or -1 when it had to be killed. */
static int wait_child(pid_t pid)
{
	struct timespec t0, now;
	int st;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int ms = 1;; ms = ms < 50 ? ms * 2 : 50) {	/* bound: the timeout */
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return st;
		if (r < 0 && errno != EINTR)
			return 0;	/* cannot happen for our own child: let open decide */
		clock_gettime(CLOCK_MONOTONIC, &now);
		long spent = (now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000;
		if (spent >= PROBE_TIMEOUT_MS) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		poll(NULL, 0, ms);
	}
}

static const char *REMEDY = "heapd will not open it; restore the file from a backup "
			    "(pmempool check, from pmdk-tools, tells what libpmemobj finds wrong)";

int hd_probe_pool(const char *path, char *err, size_t errlen)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return 0;	/* no probe possible: the open itself will tell */
	if (pid == 0)
		probe_child(path);
	int st = wait_child(pid);
	if (st == -1)
		return hd_err(err, errlen, UH_EIO, "%s is damaged: libpmemobj did not finish "
			      "checking its metadata within %d s; %s", path,
			      PROBE_TIMEOUT_MS / 1000, REMEDY);
	if (WIFSIGNALED(st))
		return hd_err(err, errlen, UH_EIO, "%s is damaged: libpmemobj crashed (%s) "
			      "reading its metadata (pool header, lanes or allocator headers); "
			      "%s", path, strsignal(WTERMSIG(st)), REMEDY);
	if (WIFEXITED(st) && WEXITSTATUS(st) == PROBE_INCONSISTENT)
		return hd_err(err, errlen, UH_EIO, "%s is damaged: libpmemobj's consistency "
			      "check fails on its metadata (pool header, lanes or allocator "
			      "headers); %s", path, REMEDY);
	return 0;
}
