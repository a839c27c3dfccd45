/*
 * sockpath.h -- the one rule for heapd's default socket path (documented
 * at uh_default_socket() in uniheap.h). Shared through uhshared by
 * libuniheap, heapd and heapctl, which does not link libuniheap, so that
 * a daemon and a client started anywhere by the same user meet.
 */
#ifndef UH_SOCKPATH_H
#define UH_SOCKPATH_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Write the default socket path to buf (NUL terminated): $UNIHEAP_SOCKET,
 * else $XDG_RUNTIME_DIR/uniheap/heapd.sock (an absolute XDG_RUNTIME_DIR
 * only), else /tmp/uniheap-<euid>/heapd.sock, whose folder is created
 * (0700) when missing and checked with uh_sockpath_private_dir().
 * Returns 0, UH_ERANGE (buf too small) or UH_EDISCONNECTED (the /tmp
 * folder is unsafe or cannot be made), with a one-line reason in err. */
int uh_sockpath_default(char *buf, size_t len, char *err, size_t errlen);

/* Make dir (mode 0700) unless it exists, then check that it can hold this
 * user's socket: a real directory (not a symbolic link) owned by the
 * effective uid, writable by nobody else. Another user could otherwise
 * put a socket of theirs where our clients look for heapd. Returns 0, or
 * UH_EDISCONNECTED with err naming the folder, the fault and the remedy. */
int uh_sockpath_private_dir(const char *dir, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* UH_SOCKPATH_H */
