/*
 * u64.h -- the two small containers of 64-bit words that libuniheap's
 * block state and heapd's mark stack use: an open-addressing map cleared
 * in O(1), and a growable vector. Plain process memory, nothing shared.
 */
#ifndef UH_U64_H
#define UH_U64_H

#include <stddef.h>
#include <stdint.h>

/* u64 -> u64 open-addressing map, cleared in O(1) by bumping gen. */
struct u64map {
	uint64_t *keys;
	uint64_t *vals;
	uint32_t *gens;
	uint32_t cap;		/* power of two */
	uint32_t n;
	uint32_t gen;
};
/* 0 or UH_ENOMEM. */
int u64map_put(struct u64map *m, uint64_t key, uint64_t val);
/* Where key's value is, or NULL. */
uint64_t *u64map_get(struct u64map *m, uint64_t key);
void u64map_clear(struct u64map *m);
void u64map_free(struct u64map *m);

/* A growable list of u64 (zero-initialised: empty). */
struct u64vec {
	uint64_t *v;
	size_t n, cap;
};
/* 0 or UH_ENOMEM. */
int u64vec_push(struct u64vec *v, uint64_t x);

#endif /* UH_U64_H */
