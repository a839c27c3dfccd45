/*
 * connwait.c -- a new connection waits for heapd (uh_connect_timeout).
 *
 * A client started before heapd, or while a service manager restarts it,
 * finds no socket file (ENOENT) or a socket nobody accepts on
 * (ECONNREFUSED), or a heapd that is stopping and refuses new sessions:
 * each is UH_EDISCONNECTED from uhc_attach, and each is retried here,
 * with short sleeps growing to 100 ms, until heapd welcomes the session
 * or the caller's timeout has passed. Any other answer (heapd refused the
 * session, protocol mismatch) ends the wait at once: waiting cannot
 * change it.
 *
 * Invariants: a timeout of 0 makes exactly one attempt (what uh_connect
 * did before it waited); the wait never sleeps past the deadline, and no
 * attempt starts after it (the last one starts at it); after the timeout the error names
 * the socket and says that heapd is not running there and how to start
 * it, when a plain connect() still finds nobody.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "uhint.h"

#define CONNECT_TIMEOUT_DEFAULT_MS 5000
#define CONNECT_WAIT_MIN_MS 10
#define CONNECT_WAIT_MAX_MS 100

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sleep_ms(uint64_t ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

int uh_connect_timeout_resolve(int timeout_ms)
{
	if (timeout_ms >= 0)
		return timeout_ms;
	const char *env = getenv("UNIHEAP_CONNECT_TIMEOUT_MS");
	if (env && *env) {
		char *end;
		errno = 0;
		long v = strtol(env, &end, 10);
		if (!*end && !errno && v >= 0 && v <= INT_MAX)
			return (int)v;
	}
	return CONNECT_TIMEOUT_DEFAULT_MS;
}

/* errno of a plain connect() to path now, 0 if something accepts. */
static int probe(const char *path)
{
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	int rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 ? 0 : errno;
	close(fd);
	return rc;
}

/* The last attempt's error, said for a user when nobody listens. */
static int not_running(const char *socket, int timeout_ms, int rc)
{
	int e = probe(socket);
	if (e != ENOENT && e != ECONNREFUSED)
		return rc;	/* heapd is there: uhc_attach's message says why */
	return uh_err_set(UH_EDISCONNECTED,
			  "heapd is not running at %s (%s; waited %d ms): start it with "
			  "`heapd --heap FILE --socket %s` (or `systemctl start heapd`), or "
			  "point UNIHEAP_SOCKET at the socket of the heapd you mean",
			  socket, strerror(e), timeout_ms, socket);
}

int uh_attach_wait(const char *socket, int readonly, const char *client_desc,
		   int timeout_ms, uhc **out, struct uhc_welcome *w)
{
	uint64_t deadline = now_ms() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0);
	uint64_t wait = CONNECT_WAIT_MIN_MS;
	int rc;

	/* bound: the deadline; each round sleeps at least 10 ms */
	for (;;) {
		rc = uhc_attach(socket, readonly, client_desc, 0, 0, out, w);
		if (rc != UH_EDISCONNECTED)
			return rc;
		uint64_t t = now_ms();
		if (t >= deadline)
			break;
		sleep_ms(wait < deadline - t ? wait : deadline - t);
		wait = wait * 2 < CONNECT_WAIT_MAX_MS ? wait * 2 : CONNECT_WAIT_MAX_MS;
	}
	return not_running(socket, timeout_ms, rc);
}
