/*
 * prog_dt_optread.h -- what test_dt_optread and its processes
 * (prog_dt_optread.c) share: the number of writers and keys, and the
 * board in the shared file D/pub where writers publish what they did.
 */
#ifndef UH_PROG_DT_OPTREAD_H
#define UH_PROG_DT_OPTREAD_H

#include <stdint.h>

#define OPT_NWRITERS 2
#define OPT_NKEYS 8000		/* keys per writer */
#define OPT_MAXSEQ (1u << 20)	/* operations per writer, at most */
#define OPT_REMOVED 0x80000000u	/* in hist: the operation removed its key */

/* Written only by writer w in row w; read by everyone. */
struct board {
	uint64_t ops[OPT_NWRITERS];			/* operations returned */
	uint64_t done[OPT_NWRITERS][OPT_NKEYS];		/* last returned: seq << 1 | removed */
	uint64_t pending[OPT_NWRITERS][OPT_NKEYS];	/* last begun: seq */
	uint32_t hist[OPT_NWRITERS][OPT_MAXSEQ];	/* per seq: key + 1, | OPT_REMOVED */
};

/* The key id a value carries in its high 32 bits. */
static inline uint64_t opt_key_id(int w, int q)
{
	return (uint64_t)w * OPT_NKEYS + (uint64_t)q + 1;
}

#endif
