/*
 * control.h -- libuniheap's control client: the C face of the one gRPC
 * client in a process (implemented in C++ in control.cc).
 *
 * One gRPC channel per process per socket path, created on first use and
 * never destroyed (destroying gRPC state at exit crashes runtimes that
 * unload us; control.cc gives the lifetime rules). Each uhc is one
 * session: an Attach stream whose end tells heapd the session is over.
 *
 * Every function returns 0 or a negative UH_E* code and, on failure, sets
 * the thread-local message (uh_err_set) naming the call and heapd's answer.
 * gRPC status codes map to: INVALID_ARGUMENT -> UH_EINVAL,
 * FAILED_PRECONDITION -> UH_ECLASSMISMATCH, RESOURCE_EXHAUSTED -> UH_ENOSPC,
 * NOT_FOUND -> UH_ENOTFOUND, UNAVAILABLE / DEADLINE_EXCEEDED / CANCELLED ->
 * UH_EDISCONNECTED, anything else -> UH_EPROTO.
 */
#ifndef UH_CONTROL_H
#define UH_CONTROL_H

#include <stdint.h>

#include "uniheap.h"

#ifdef __cplusplus
extern "C" {
#endif

#define UH_PROTOCOL_VERSION 1u

typedef struct uhc uhc;

/* What heapd's Welcome told us. */
struct uhc_welcome {
	uint32_t session;
	uint64_t token;
	uint64_t heap_size;
	uint64_t header_off;
	uint32_t format_version;
	uint32_t durability;	/* UH_DUR_* */
	uint64_t log_off;
	uint64_t log_size;
	char heap_path[4096];
	char heap_name[64];
	char gc_path[4096];	/* "" from a heapd without a GC file */
};

/* Open the session stream and wait for Welcome (5 s deadline). On success
 * *out must be released with uhc_detach(). UH_EDISCONNECTED when nothing
 * listens on socket; UH_EPROTO when heapd refuses (message says why).
 * prev_session/prev_token: 0, or the session this process had with a
 * heapd that ended: heapd recovers it and hands its arenas to the new one
 * (re-attach). */
int uhc_attach(const char *socket, int readonly, const char *client_desc,
	       uint32_t prev_session, uint64_t prev_token, uhc **out, struct uhc_welcome *w);

/* Send Goodbye, end the stream, free c. NULL is ignored. Can't fail. */
void uhc_detach(uhc *c);

/* Nonzero while the session stream is up (heapd alive). Lock-free, no
 * system call; does not check for fork (the callers' handles do). */
int uhc_connected(uhc *c);
/* Wait at most ms for the session stream to end; nonzero if it has. */
int uhc_wait_ended(uhc *c, int ms);

int uhc_register_class(uhc *c, const char *name, const uh_field_spec *fields,
		       uint32_t nfields, uint32_t *class_id);

/* Lease an arena of slot_size (a size class) or a large-object region of
 * size bytes (header included). */
struct uhc_arena {
	uint64_t arena_off;
	uint32_t slot_size;
	uint32_t nslots;
	uint64_t first_slot;
};
int uhc_lease_arena(uhc *c, uint32_t slot_size, struct uhc_arena *out);
int uhc_lease_large(uhc *c, uint64_t size, struct uhc_arena *out);
int uhc_return_arena(uhc *c, uint64_t arena_off);

/* Lease one more extent of about size bytes for the session's log; heapd
 * chains it after the log's last one. UH_ENOSPC when the heap is full. */
int uhc_lease_log_extent(uhc *c, uint64_t size, uint64_t *off, uint64_t *got);
/* Give every extent of the session's log back (the log must be idle). */
int uhc_trim_log(uhc *c);

/* In a child forked after gRPC ran here, every call above goes to a fresh
 * copy of this library (ctlcopy.h). */

#ifdef __cplusplus
}
#endif

#endif /* UH_CONTROL_H */
