/*
 * pins.cc -- the pins of a session's live proxies (pins.h says why weak
 * references and when the table is swept).
 */
#include "pins.h"

namespace uhn {

int ProxyPins::track(napi_env env, uh_heap *h, napi_value obj, uh_off ref, bool *pinned)
{
	uint32_t id = 0;
	napi_ref r = nullptr;
	*pinned = false;
	if (v.size() >= sweep_at) {
		size_t left = sweep(env, h);
		sweep_at = left * 2 > SWEEP_MIN ? left * 2 : SWEEP_MIN;
	}
	int rc = uh_pin(h, ref, &id);
	if (rc == UH_EFREED)
		return 0;
	if (rc)
		return rc;
	if (napi_create_reference(env, obj, 0, &r) != napi_ok) {
		uh_unpin(h, id);
		return UH_ENOMEM;
	}
	v.push_back(Entry{ r, id });
	*pinned = true;
	return 0;
}

size_t ProxyPins::sweep(napi_env env, uh_heap *h)
{
	size_t n = 0;
	for (size_t i = 0; i < v.size(); i++) {	/* every entry once */
		napi_value obj = nullptr;
		if (napi_get_reference_value(env, v[i].ref, &obj) == napi_ok && obj != nullptr) {
			v[n++] = v[i];	/* its proxy lives */
			continue;
		}
		uh_unpin(h, v[i].id);
		napi_delete_reference(env, v[i].ref);
	}
	v.resize(n);
	return n;
}

void ProxyPins::clear(napi_env env)
{
	for (const Entry &e : v)	/* every entry once */
		napi_delete_reference(env, e.ref);
	v.clear();
	sweep_at = SWEEP_MIN;
}

}  // namespace uhn
