/*
 * prog_gold_util.h -- what the golden-heap programs (prog_gold_*.c) share
 * besides the heap's content (prog_gold_model.h): stop at a failed call,
 * count a mismatch. The includer defines GOLD_PROG (its name, for the
 * messages) first and declares `static int bad;`.
 */
#ifndef PROG_GOLD_UTIL_H
#define PROG_GOLD_UTIL_H

#include <stdio.h>
#include <stdlib.h>

#include "uniheap.h"

/* A call that must succeed: else the program stops, naming it. */
#define TRY(call)							\
	do {								\
		int rc_ = (call);					\
		if (rc_ != 0) {						\
			fprintf(stderr, GOLD_PROG ": %s: %s: %s\n", #call,	\
				uh_strerror(rc_), uh_errmsg());		\
			exit(1);					\
		}							\
	} while (0)

/* A property of the heap: a mismatch is printed and counted (the run
 * stops after 50 of them: one damage tends to show everywhere). */
#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			printf("MISMATCH %s:%d: ", __FILE__, __LINE__);	\
			printf(__VA_ARGS__);				\
			printf(" [%s] %s\n", #cond, uh_errmsg());	\
			if (++bad > 50)					\
				exit(1);				\
		}							\
	} while (0)

#endif
