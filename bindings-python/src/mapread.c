/*
 * mapread.c -- one key of a hash or sorted map proxy: the map's key kind
 * (cached in the proxy), the key converted, its lookup, and its value
 * read as a Python object; and the count of this process's sorted-map
 * writes that scans watch (mapiter.c). Below both the MapBase type
 * (map.c) and the map iterators (mapiter.c), which both read keys.
 */
#include "ext.h"

int uhpy_map_kind(ProxyObject *p, uint32_t *kind)
{
	if (p->key_kind) {
		*kind = p->key_kind;
		return 0;
	}
	int rc = uhpy_map_sorted(p) ? uh_smap_key_kind(p->heap->h, p->off, kind)
				    : uh_map_key_kind(p->heap->h, p->off, kind);
	if (rc)
		return uhpy_raise(rc, "map"), -1;
	p->key_kind = *kind;
	return 0;
}

/* Usable proxy and its key converted. */
int uhpy_map_key(ProxyObject *p, PyObject *key, uh_key *k)
{
	uint32_t kind;

	if (uhpy_proxy_usable(p) < 0 || uhpy_map_kind(p, &kind) < 0)
		return -1;
	return uhpy_to_key(kind, key, k);
}

/* 1 found (*v set), 0 not found, -1 error. */
int uhpy_map_lookup(ProxyObject *p, PyObject *key, uh_value *v)
{
	uh_key k;
	int rc;

	if (uhpy_map_key(p, key, &k) < 0)
		return -1;
	rc = uhpy_map_sorted(p) ? uh_smap_get(p->heap->h, p->off, &k, v)
				: uh_map_get(p->heap->h, p->off, &k, v);
	if (rc == UH_ENOTFOUND)
		return 0;
	if (rc)
		return uhpy_raise(rc, "map get"), -1;
	return 1;
}

/* Where a key's value is read from: first the value a step already read
 * (if any), then key looked up, converted on its first lookup. */
struct entry {
	ProxyObject *p;
	PyObject *key;
	const uh_value *first;
	uh_key k;
	int converted;
};

enum { NOT_FOUND = UHPY_RAISED + 1 };	/* fetch_entry's own code */

static int fetch_entry(uh_heap *h, void *arg, uh_value *vals, uint32_t *n)
{
	struct entry *e = arg;
	int rc;

	*n = 1;
	if (e->first) {
		vals[0] = *e->first;
		e->first = NULL;
		return 0;
	}
	if (!e->converted && uhpy_map_key(e->p, e->key, &e->k) < 0)
		return UHPY_RAISED;
	e->converted = 1;
	rc = uhpy_map_sorted(e->p) ? uh_smap_get(h, e->p->off, &e->k, vals)
				   : uh_map_get(h, e->p->off, &e->k, vals);
	return rc == UH_ENOTFOUND ? NOT_FOUND : rc;
}

/* The value e fetches as a Python object: 1 with *out, 0 if the key is
 * not in the map, -1 with an exception. A str or bytes value replaced
 * under its copy is looked up again (uhpy_copy_values). */
static int read_entry(struct entry *e, PyObject **out)
{
	uh_value v;
	PyObject *copy;
	int rc = uhpy_copy_values(e->p->heap, fetch_entry, e, &v, &copy, 1);

	if (rc == NOT_FOUND)
		return 0;
	if (rc)
		return rc == UHPY_RAISED ? -1 : (uhpy_raise(rc, "map get"), -1);
	*out = copy ? copy : uhpy_from_value(e->p->heap, &v);
	return *out ? 1 : -1;
}

int uhpy_map_read(ProxyObject *p, PyObject *key, PyObject **out)
{
	struct entry e = { .p = p, .key = key };

	return read_entry(&e, out);
}

/* The Python value of v, the value of key a step read: 1 with *out; if
 * it was a str or bytes value replaced under the copy, key's value now
 * (as uhpy_map_read: 0 if it was removed since); -1 with an exception. */
int uhpy_map_value_or_lookup(ProxyObject *p, PyObject *key, const uh_value *v,
			      PyObject **out)
{
	struct entry e = { .p = p, .key = key, .first = v };

	return read_entry(&e, out);
}

/* Puts and removes on sorted maps by this process: a scan drops the
 * entries it read ahead when this moved since (iter_next). */
uint64_t uhpy_smap_writes;
