/*
 * ctlcopy.h -- the control client of a forked child: a fresh copy of this
 * library (ctlcopy.c), whose control client control.cc's calls go to.
 *
 * gRPC cannot run in a child forked after the parent used it: its threads
 * are gone, and its poller (an epoll set shared with the parent) and
 * connections are the parent's, so a call there hangs the child and
 * breaks the parent's connection (a new channel too; gRPC's own fork
 * support does the same here while any thread waits in gRPC, as the
 * session reader always does). Such a child loads a fresh copy of this
 * library into a new link-map namespace (dlmopen), whose gRPC has never
 * run, and its control calls go there; the inherited gRPC is never
 * touched. The copy exports its control client (control.h) as the table
 * below. Only the types are named here, so that this file does not
 * depend on control.h: control.cc uses it, never the other way.
 */
#ifndef UH_CTLCOPY_H
#define UH_CTLCOPY_H

#include <stdint.h>

#include "uniheap.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct uhc uhc;
struct uhc_welcome;
struct uhc_arena;

struct uhc_ops {
	uint32_t version;	/* UHC_OPS_VERSION */
	uint32_t size;		/* sizeof(struct uhc_ops) */
	int (*attach)(const char *, int, const char *, uint32_t, uint64_t, uhc **,
		      struct uhc_welcome *);
	void (*detach)(uhc *);
	int (*connected)(uhc *);
	int (*wait_ended)(uhc *, int);
	int (*register_class)(uhc *, const char *, const uh_field_spec *, uint32_t, uint32_t *);
	int (*lease_arena)(uhc *, uint32_t, struct uhc_arena *);
	int (*lease_large)(uhc *, uint64_t, struct uhc_arena *);
	int (*return_arena)(uhc *, uint64_t);
	int (*lease_log_extent)(uhc *, uint64_t, uint64_t *, uint64_t *);
	int (*trim_log)(uhc *);
	const char *(*errmsg)(void);	/* the copy's uh_errmsg */
};
#define UHC_OPS_VERSION 1u
/* control.cc's table of its own control client, exported (uniheap.map)
 * for the parent copy of a forked child to find with dlsym; no API. */
extern const struct uhc_ops uh_control_ops;

/* Once per process, before gRPC is first used: a fork from now on gives
 * a child that must use a copy (pthread_atfork). */
void uhc_fork_watch(void);
/* The copy's control client when this process is a child forked after
 * the library's gRPC ran (in it or in an ancestor) and the copy is
 * loaded, else NULL. Cheap: an atomic load, for every control call. */
const struct uhc_ops *uhc_fork_ops(void);
/* uhc_fork_ops, loading the copy on first use in such a child. NULL
 * with *rc = 0 when no copy is needed; NULL with *rc = UH_EFORK (message
 * set) when one is needed and cannot be loaded. */
const struct uhc_ops *uhc_fork_ops_load(int *rc);
/* After a call into the copy failed with rc: the copy's message, here. */
int uhc_fork_err(const struct uhc_ops *ops, int rc);

#ifdef __cplusplus
}
#endif

#endif /* UH_CTLCOPY_H */
