/*
 * crash_campaign.h -- the driver shared by the enumerated-crash tests
 * (test_crash_enum, test_dt_*_crash): run the workload once without the
 * crash hook to count its persist barriers N, then for k = 1..N run it on
 * a fresh copy of the template heap with UH_CRASH_AT=k (libuniheap
 * SIGKILLs it right before its k-th barrier), let heapd recover and check
 * the heap. What differs per test (argv of workload and checker, modes,
 * how heapd restarts, which live count to expect) is in the parameters.
 *
 * Also the workload half shared by the prog_dt_*_crash programs.
 */
#ifndef UH_TESTS_CRASH_CAMPAIGN_H
#define UH_TESTS_CRASH_CAMPAIGN_H

#include <stddef.h>
#include <stdint.h>

#include "harness.h"

enum {
	CC_LIVE = 1,	/* heapd keeps running and reaps the dead session */
	CC_FROZEN = 2,	/* heapd SIGSTOPped after the workload's setup, SIGKILLed
			 * after the crash and started again: start-up recovery */
};

struct crash_campaign {
	struct th_heapd *d;
	const char *heapd_args;	/* of every heapd start after the template */
	/* How heapd goes before the heap file is replaced by the template. */
	void (*heapd_down)(struct th_heapd *d);
	/* 1: every restart is SIGKILL + start, and the first recovery after a
	 * crash (status right after it) must already have freed and nulled
	 * nothing; 0: th_heapd_restart, only the second recovery is checked. */
	int kill_restart;
	int modes;		/* CC_LIVE | CC_FROZEN */
	int frozen_odd;		/* 1: CC_FROZEN only for odd k */
	/* argv (16 slots) of the workload; rfd/gfd: NULL, or the fds of the
	 * --ready-fd/--go-fd handshake (CC_FROZEN). */
	void (*work_argv)(char **argv, char *rfd, char *gfd);
	void (*check_argv)(char **argv);	/* argv (16 slots) of the checker */
	/* NULL, or the checker's key of the objects that must be live after
	 * the second recovery (plus base_live). */
	const char *live_key;
	uint64_t base_live;
	void (*on_work_out)(const char *out);	/* NULL or more checks of the uncrashed run */
	/* Set by cc_save_template; barriers: N, set by cc_run. */
	char template_path[700], ack_path[700];
	long barriers;
	/* Checks whose checker said state=acked / state=acked+1: the op in
	 * flight found undone / done. */
	long undone_done[2];
};

/* Save d->heap (heapd not running) as <dir>/template.uh; the ack file of
 * the workload is <dir>/<ack_name>. 0 or -1. */
int cc_save_template(struct crash_campaign *c, const char *ack_name);
/* Restart heapd the way c says. 0 or -1. */
int cc_restart(struct crash_campaign *c);
/* The whole main of a campaign over one prog_*_crash program (cc_prog_argv's
 * command line): `prog --setup` on a heapd started with heapd_args makes
 * the template (on_setup, if set, reads its output and may fill n, the
 * --n argument of every later run; nonzero fails the test), then cc_run
 * with live mode for every k and frozen mode for every k, or only for odd
 * k unless the variable full_env is set. Ends with th_summary's code. */
struct cc_template {
	const char *suite, *prog, *ack_name, *heapd_args;
	const char *full_env;	/* NULL: frozen mode for every k */
	int (*on_setup)(const char *out, char *n, size_t n_size);
	void (*on_work_out)(const char *out);
};
int cc_template_main(const struct cc_template *t);

/* Count the barriers, then run every crash point (UH_CRASH_ENUM_MAX=k:
 * only the first k). Returns how many crash points were run. */
long cc_run(struct crash_campaign *c);

/* Command line of the prog_dt_*_crash programs: --setup|--work|--check
 * --socket S [--ack FILE] [--n N] [--ready-fd R --go-fd G]. Unset: NULL,
 * 0 and -1; each program checks what its mode needs. */
struct cc_args {
	const char *mode, *sock, *ack;
	long n;
	int ready_fd, go_fd;
};
void cc_parse_args(int argc, char **argv, struct cc_args *a);
/* The test side: argv (16 slots) of such a program; n and rfd/gfd may be
 * NULL (left out). */
void cc_prog_argv(char **argv, const char *prog, const char *mode, const char *sock,
		  const char *ack, const char *n, char *rfd, char *gfd);

/* Workload half of the prog_dt_*_crash programs: lease an arena of every
 * slot size in slots (objects rolled back, the arenas stay), hand-shake
 * with the test when ready_fd >= 0, then run op i (ops + i * op_size) in
 * its own uh_run block for i < nops, appending "i\n" to the ack file after
 * each. NULL when all went well, else what failed (*rc: uh error or 0). */
const char *cc_run_ops(uh_heap *h, const char *ack, int ready_fd, int go_fd,
		       const uint32_t *slots, size_t nslots, uh_block_fn body,
		       const void *ops, size_t op_size, int nops, int *rc);

/* The --work mode of a program whose ops are 0..nops-1 (ints, no arena
 * to lease first): cc_run_ops, then "barriers=<N> ops=<nops>" on stdout,
 * or "FAIL <what>: <error>". The exit code: 0 or 1. */
int cc_work_ops(uh_heap *h, const struct cc_args *a, uh_block_fn body, int nops);

/* main() of such a program: --setup runs setup (NULL: nothing), --work
 * cc_work_ops(body, nops), --check cc_check_acked(matches); prog names it
 * in the usage line. The exit code. */
int cc_ops_main(int argc, char **argv, const char *prog, int (*setup)(uh_heap *h),
		uh_block_fn body, int nops,
		int (*matches)(uh_heap *h, int n, uint64_t *live, int say));

/* Checker half: root name is absent (want NULL) or names a bytes object
 * holding want[0, len). 1 if so; else 0, and with say it prints why
 * (after n ops). */
int cc_root_bytes(uh_heap *h, const char *name, const void *want, size_t len, int n, int say);

/* Checker half of a workload whose state after n ops is a model:
 * matches(h, n, &live, say) says whether the heap holds it (say: print
 * why not). The heap must hold the model after the acknowledged ops or
 * after one more (the op in flight, all or nothing); prints
 * "ops=<n> acked=<a> live=<live>" or why neither. 0 ok, 1 mismatch. */
int cc_check_acked(uh_heap *h, const char *ack, int nops,
		   int (*matches)(uh_heap *h, int n, uint64_t *live, int say));

#endif
