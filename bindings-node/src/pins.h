/*
 * pins.h -- the pins of a session's live proxies (FORMAT.md 9.3): one per
 * proxy, released as soon as V8 has collected the proxy.
 *
 * Each entry holds the pin's id and a weak reference to its proxy. V8
 * clears a weak reference in the collection that finds its object dead,
 * the young generation's included and within the collection, whereas a
 * FinalizationRegistry's callbacks wait for a full collection and then
 * for the event loop: a synchronous loop that made and dropped proxies
 * kept every one of their objects pinned until it returned. sweep()
 * unpins the entries whose proxy is gone; track() sweeps by itself each
 * time the table has doubled since the last sweep (from SWEEP_MIN), so
 * the table costs amortized O(1) per proxy and never holds more than
 * twice what lives plus what V8 has not yet collected.
 *
 * Everything runs on the session's JS thread (the references belong to
 * its environment). After the session is closed its pins are gone with
 * it: clear() only deletes the references.
 */
#ifndef UNIHEAP_NODE_PINS_H
#define UNIHEAP_NODE_PINS_H

#include <node_api.h>
#include <uniheap.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace uhn {

class ProxyPins {
public:
	/* Pin ref for proxy obj. 0 and *pinned = true, or 0 and false when the
	 * object was freed already (nothing pinned), or a UH_E* code. */
	int track(napi_env env, uh_heap *h, napi_value obj, uh_off ref, bool *pinned);
	/* Unpin every entry whose proxy V8 has collected; the entries left. */
	size_t sweep(napi_env env, uh_heap *h);
	/* Delete every reference (h is closed: its pins went with it). */
	void clear(napi_env env);
	size_t size() const { return v.size(); }

private:
	static constexpr size_t SWEEP_MIN = 4096;
	struct Entry {
		napi_ref ref;
		uint32_t id;
	};
	std::vector<Entry> v;
	size_t sweep_at = SWEEP_MIN;
};

}  // namespace uhn

#endif
