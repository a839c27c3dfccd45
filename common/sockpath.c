/*
 * sockpath.c -- heapd's default socket path (see sockpath.h).
 *
 * Without $UNIHEAP_SOCKET or $XDG_RUNTIME_DIR the socket lives in a
 * per-user folder of /tmp. /tmp is shared by every user, so the folder is
 * trusted only when it is ours alone; /tmp's sticky bit then keeps others
 * from renaming or removing it between the check and its use.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "uniheap.h"
#include "sockpath.h"

#define SOCK_NAME "heapd.sock"

int uh_sockpath_private_dir(const char *dir, char *err, size_t errlen)
{
	struct stat st;
	uid_t me = geteuid();

	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create the socket folder %s: %s", dir,
			 strerror(errno));
		return UH_EDISCONNECTED;
	}
	if (lstat(dir, &st) != 0) {
		snprintf(err, errlen, "cannot check the socket folder %s: %s", dir,
			 strerror(errno));
		return UH_EDISCONNECTED;
	}
	const char *fault = NULL;
	char why[96];
	if (S_ISLNK(st.st_mode)) {
		fault = "is a symbolic link";
	} else if (!S_ISDIR(st.st_mode)) {
		fault = "is not a directory";
	} else if (st.st_uid != me) {
		snprintf(why, sizeof(why), "belongs to uid %u, not to you (uid %u)",
			 (unsigned)st.st_uid, (unsigned)me);
		fault = why;
	} else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, sizeof(why), "is writable by other users (mode %04o)",
			 (unsigned)(st.st_mode & 07777));
		fault = why;
	}
	if (!fault)
		return 0;
	snprintf(err, errlen, "refusing the socket folder %s: it %s; remove it, or set "
		 "UNIHEAP_SOCKET to a socket path of your own", dir, fault);
	return UH_EDISCONNECTED;
}

int uh_sockpath_default(char *buf, size_t len, char *err, size_t errlen)
{
	const char *env = getenv("UNIHEAP_SOCKET");
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	int n;

	if (env && *env) {
		n = snprintf(buf, len, "%s", env);
	} else if (xdg && xdg[0] == '/') {
		/* A relative XDG_RUNTIME_DIR is invalid (XDG base directory
		 * specification) and would differ from one folder to the next. */
		n = snprintf(buf, len, "%s/uniheap/" SOCK_NAME, xdg);
	} else {
		char dir[64];
		snprintf(dir, sizeof(dir), "/tmp/uniheap-%u", (unsigned)geteuid());
		int rc = uh_sockpath_private_dir(dir, err, errlen);
		if (rc != 0)
			return rc;
		n = snprintf(buf, len, "%s/" SOCK_NAME, dir);
	}
	if (n < 0 || (size_t)n >= len) {
		snprintf(err, errlen, "default socket path: buffer of %zu bytes too small", len);
		return UH_ERANGE;
	}
	return 0;
}
