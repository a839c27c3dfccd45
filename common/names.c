/*
 * names.c -- the names the format gives its codes, for messages and
 * status output: one definition that heapd (its log and status) and
 * libuniheap (uh_durability_name() of its public API) both use.
 */
#include "uniheap.h"

const char *uh_durability_name(uint32_t mode)
{
	switch (mode) {
	case UH_DUR_PMEM: return "pmem";
	case UH_DUR_SYNC: return "sync";
	case UH_DUR_MEMORY: return "memory";
	default: return "unknown";
	}
}
