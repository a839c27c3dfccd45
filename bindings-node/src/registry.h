/*
 * registry.h -- every open session of this process, by socket.
 *
 * libuniheap maps a heap once per process when sessions are opened from one
 * another (uh_session_open) and unmaps it with the last of them. The
 * registry is what lets a worker thread find a session to open its own
 * from, and it serializes that with the closing of sessions: a session is
 * taken out of the registry (under its lock) before it is disconnected, so
 * no thread ever opens from a session being closed.
 */
#ifndef UNIHEAP_NODE_REGISTRY_H
#define UNIHEAP_NODE_REGISTRY_H

#include <uniheap.h>

namespace uhn {

/* Open a session on the heapd at socket (NULL: libuniheap's default):
 * over this process's mapping of that heap when a session to it is open
 * (a writable one for a writable request), else with uh_connect_timeout()
 * (timeout_ms: how long to wait for heapd, UH_CONNECT_DEFAULT for
 * libuniheap's default; the registry stays locked meanwhile, so other
 * threads' connects wait too, for the same heapd). Returns 0 or a UH_E*
 * code (uh_errmsg() set, on this thread). */
int registry_open(const char *socket, bool readonly, int timeout_ms, uh_heap **out);

/* Forget h and disconnect it. NULL is ignored. Can't fail. */
void registry_close(uh_heap *h);

}  // namespace uhn

#endif
