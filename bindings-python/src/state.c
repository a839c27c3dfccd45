/*
 * state.c -- the process-wide state of the _uniheap extension: the module
 * state (types and error classes, set once by module.c's exec slot) and
 * the fork epoch. The bottom of the extension: every file reads these,
 * and this file calls none of them.
 */
#include "ext.h"

uhpy_state *uhpy_st;

unsigned uhpy_fork_epoch;
