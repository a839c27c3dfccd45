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

/* The value of key as a Python object: 1 with *out, 0 if key is not in
 * the map, -1 with an exception. A str or bytes value replaced under its
 * copy is looked up again (uhpy_from_value_try). */
int uhpy_map_read(ProxyObject *p, PyObject *key, PyObject **out)
{
	uh_value v;
	int rc;

	for (int tries = 0; tries < UHPY_READ_TRIES; tries++) {
		if ((rc = uhpy_map_lookup(p, key, &v)) != 1)
			return rc;
		if ((rc = uhpy_from_value_try(p->heap, &v, out)) != 0)
			return rc;
	}
	uhpy_kept_changing("key", key);
	return -1;
}

/* The Python value of v, the value of key a step read: 1 with *out; if
 * it was a str or bytes value replaced under the copy, key's value now
 * (as uhpy_map_read: 0 if it was removed since); -1 with an exception. */
int uhpy_map_value_or_lookup(ProxyObject *p, PyObject *key, const uh_value *v,
			      PyObject **out)
{
	int rc = uhpy_from_value_try(p->heap, v, out);

	return rc == 0 ? uhpy_map_read(p, key, out) : rc;
}

/* Puts and removes on sorted maps by this process: a scan drops the
 * entries it read ahead when this moved since (iter_next). */
uint64_t uhpy_smap_writes;
