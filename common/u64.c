/*
 * u64.c -- the containers of u64.h: libuniheap's block state, heapd's
 * mark stack.
 */
#include <stdlib.h>
#include <string.h>

#include "u64.h"
#include "uniheap.h"

static inline uint32_t slot_hash(uint64_t k, uint32_t cap)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (uint32_t)k & (cap - 1);
}

static int u64map_grow(struct u64map *m)
{
	struct u64map g = { 0 };
	uint32_t cap = m->cap ? m->cap * 2 : 64;

	g.keys = malloc(cap * sizeof(uint64_t));
	g.vals = malloc(cap * sizeof(uint64_t));
	g.gens = calloc(cap, sizeof(uint32_t));
	if (!g.keys || !g.vals || !g.gens) {
		free(g.keys);
		free(g.vals);
		free(g.gens);
		return UH_ENOMEM;
	}
	g.cap = cap;
	g.gen = 1;
	for (uint32_t i = 0; i < m->cap; i++)	/* bound: old capacity */
		if (m->gens[i] == m->gen)
			u64map_put(&g, m->keys[i], m->vals[i]);
	u64map_free(m);
	*m = g;
	return 0;
}

int u64map_put(struct u64map *m, uint64_t key, uint64_t val)
{
	if ((m->n + 1) * 2 > m->cap) {	/* keep load <= 1/2 */
		int rc = u64map_grow(m);
		if (rc)
			return rc;
	}
	uint32_t i = slot_hash(key, m->cap);
	while (m->gens[i] == m->gen && m->keys[i] != key)	/* bound: cap */
		i = (i + 1) & (m->cap - 1);
	if (m->gens[i] != m->gen) {
		m->gens[i] = m->gen;
		m->keys[i] = key;
		m->n++;
	}
	m->vals[i] = val;
	return 0;
}

uint64_t *u64map_get(struct u64map *m, uint64_t key)
{
	if (m->n == 0)
		return NULL;
	uint32_t i = slot_hash(key, m->cap);
	while (m->gens[i] == m->gen) {	/* bound: load <= 1/2 */
		if (m->keys[i] == key)
			return &m->vals[i];
		i = (i + 1) & (m->cap - 1);
	}
	return NULL;
}

void u64map_clear(struct u64map *m)
{
	if (m->n == 0)
		return;
	m->n = 0;
	if (++m->gen == 0) {	/* wrapped: really clear once in 2^32 */
		memset(m->gens, 0, m->cap * sizeof(uint32_t));
		m->gen = 1;
	}
}

void u64map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	free(m->gens);
	memset(m, 0, sizeof(*m));
}

int u64vec_push(struct u64vec *v, uint64_t x)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 32;
		uint64_t *n = realloc(v->v, cap * sizeof(uint64_t));
		if (!n)
			return UH_ENOMEM;
		v->v = n;
		v->cap = cap;
	}
	v->v[v->n++] = x;
	return 0;
}
