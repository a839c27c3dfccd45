/*
 * notify.c -- readiness and stop notices for a service manager (systemd's
 * Type=notify), without linking libsystemd.
 *
 * The protocol (sd_notify(3)): the manager passes the path of a datagram
 * socket in $NOTIFY_SOCKET ("@name" for the abstract namespace); the
 * service sends it one datagram of newline-separated assignments such as
 * "READY=1" or "STOPPING=1". The manager identifies the sender by its
 * credentials, so there is nothing else to send.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "heapd.h"

/* Fill sa from $NOTIFY_SOCKET; returns the address length, 0 if the
 * variable is unset or names no usable address. */
static socklen_t notify_addr(struct sockaddr_un *sa)
{
	const char *path = getenv("NOTIFY_SOCKET");
	if (!path || (path[0] != '/' && path[0] != '@'))
		return 0;
	size_t n = strlen(path);
	if (n < 2 || n >= sizeof(sa->sun_path))
		return 0;
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path, path, n);
	if (path[0] == '@')
		sa->sun_path[0] = '\0';	/* abstract: no terminating NUL counts */
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (path[0] == '/'));
}

void hd_notify(const char *state)
{
	struct sockaddr_un sa;
	socklen_t len = notify_addr(&sa);
	if (len == 0)
		return;
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		hd_log("warn", "notify", "error=\"socket: %s\"", strerror(errno));
		return;
	}
	ssize_t sent = sendto(fd, state, strlen(state), MSG_NOSIGNAL,
			      (const struct sockaddr *)&sa, len);
	if (sent < 0)
		hd_log("warn", "notify", "socket=%s error=\"%s\"", getenv("NOTIFY_SOCKET"),
		       strerror(errno));
	close(fd);
}
