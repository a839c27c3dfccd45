/*
 * share.c -- handing heapd's files to a group (heapd --group): the system
 * service runs as its own user, and its clients, other users, need the
 * socket to connect and the heap file to map it read-write.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "heapd.h"

int hd_share_path(const char *path, gid_t gid, mode_t mode, char *err, size_t errlen)
{
	if (chown(path, (uid_t)-1, gid) != 0) {
		int e = errno;
		snprintf(err, errlen, "cannot give %s to group %u: %s%s", path, (unsigned)gid,
			 strerror(e), e == EPERM ? " (heapd's user must own it and be a "
			 "member of that group)" : "");
		return -1;
	}
	if (chmod(path, mode) != 0) {
		snprintf(err, errlen, "cannot set mode %04o on %s: %s", (unsigned)mode, path,
			 strerror(errno));
		return -1;
	}
	return 0;
}
