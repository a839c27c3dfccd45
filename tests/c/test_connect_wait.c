/*
 * test_connect_wait.c -- uh_connect_timeout waits for heapd: a client
 * started before heapd connects once heapd comes up; a timeout of 0 fails
 * at once and a missing heapd fails after the timeout, both with a message
 * that names the socket and says heapd is not running; a socket file
 * nobody listens on (a dead heapd's) counts as not running; uh_connect
 * takes its default from UNIHEAP_CONNECT_TIMEOUT_MS.
 * Timings are checked only from below (a wait of at least the timeout)
 * and generously from above: the machine may be loaded.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "harness.h"

static const char *SUITE = "test_connect_wait";

#define GENEROUS_MS 60000

/* rc must be UH_EDISCONNECTED with a message naming sock and saying heapd
 * is not running. */
static void expect_not_running(int rc, const char *sock, const char *why)
{
	const char *msg = uh_errmsg();

	TH_CHECK_EQ(rc, UH_EDISCONNECTED);
	if (strstr(msg, "heapd is not running") && strstr(msg, sock) && strstr(msg, why) &&
	    strstr(msg, "heapd --heap"))
		th_passed++;
	else
		th_fail(__FILE__, __LINE__, "message lacks socket, cause or advice: %s", msg);
}

struct early {
	const char *sock;
	int rc;
	char msg[1024];
	uh_heap *h;
};

static void *connect_early(void *arg)
{
	struct early *e = arg;
	e->rc = uh_connect_timeout(e->sock, 0, GENEROUS_MS, &e->h);
	snprintf(e->msg, sizeof(e->msg), "%s", uh_errmsg());
	return NULL;
}

/* A client started while heapd is down connects once heapd is back. */
static void client_before_heapd(struct th_heapd *d)
{
	struct early e = { .sock = d->sock, .rc = -999 };
	pthread_t t;

	th_heapd_stop(d);
	TH_CHECK(access(d->sock, F_OK) != 0);
	TH_CHECK_EQ(pthread_create(&t, NULL, connect_early, &e), 0);
	th_sleep_ms(500);
	TH_CHECK_EQ(th_heapd_start(d, NULL), 0);
	pthread_join(t, NULL);
	if (e.rc != 0)
		th_fail(__FILE__, __LINE__, "early client: %d %s", e.rc, e.msg);
	else
		th_passed++;
	if (e.rc == 0) {
		uh_info in;
		TH_CHECK_RC(uh_heap_info(e.h, &in));
		uh_disconnect(e.h);
	}
}

/* No heapd: 0 fails at once, 1000 ms fails after at least about that. */
static void missing_heapd(const char *sock)
{
	uh_heap *h = NULL;
	uint64_t t0 = th_now_ms();

	expect_not_running(uh_connect_timeout(sock, 0, 0, &h), sock, "No such file");
	TH_CHECK(th_now_ms() - t0 < GENEROUS_MS);
	t0 = th_now_ms();
	expect_not_running(uh_connect_timeout(sock, 0, 1000, &h), sock, "No such file");
	uint64_t took = th_now_ms() - t0;
	TH_CHECK(took >= 950);
	TH_CHECK(took < GENEROUS_MS);
	TH_CHECK(h == NULL);
	TH_CHECK_ERR(uh_connect_timeout(sock, 0xff00, 0, &h), UH_EINVAL);
}

/* A socket file nobody accepts on: connect() says ECONNREFUSED. */
static void refused(const char *dir)
{
	char path[600];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	uh_heap *h = NULL;

	snprintf(path, sizeof(path), "%s/dead.sock", dir);
	TH_CHECK(strlen(path) < sizeof(sa.sun_path));	/* else no such socket can be made */
	memcpy(sa.sun_path, path, strlen(path) + 1 < sizeof(sa.sun_path) ? strlen(path) + 1 : 0);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	TH_CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	close(fd);	/* the file stays, nobody listens */
	expect_not_running(uh_connect_timeout(path, 0, 200, &h), path, "refused");
	unlink(path);
}

/* uh_connect's wait comes from the environment when set. */
static void env_default(const char *sock)
{
	uh_heap *h = NULL;

	setenv("UNIHEAP_CONNECT_TIMEOUT_MS", "300", 1);
	uint64_t t0 = th_now_ms();
	expect_not_running(uh_connect(sock, 0, &h), sock, "No such file");
	uint64_t took = th_now_ms() - t0;
	TH_CHECK(took >= 280 && took < GENEROUS_MS);
	setenv("UNIHEAP_CONNECT_TIMEOUT_MS", "0", 1);
	expect_not_running(uh_connect(sock, 0, &h), sock, "No such file");
	unsetenv("UNIHEAP_CONNECT_TIMEOUT_MS");
}

int main(void)
{
	struct th_heapd d = { 0 };
	char nowhere[700];

	if (th_heapd_start(&d, NULL) != 0)
		return 1;
	snprintf(nowhere, sizeof(nowhere), "%s/nobody.sock", d.dir);
	missing_heapd(nowhere);
	refused(d.dir);
	env_default(nowhere);
	client_before_heapd(&d);
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
