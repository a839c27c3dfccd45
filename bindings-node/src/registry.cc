/*
 * registry.cc -- every open session of this process, by socket (see
 * registry.h). One mutex guards the list; it is held across
 * uh_session_open() so that the session opened from cannot be closed
 * meanwhile. Opening is rare (a connect per thread), so this costs nothing
 * on any hot path.
 */
#include "registry.h"

#include <mutex>
#include <string>
#include <vector>

namespace uhn {

namespace {

struct Entry {
	std::string socket;
	uh_heap *h;
	bool readonly;
};

/* Never freed: worker threads may still close sessions while the process
 * exits, after static destructors would have run. */
struct Registry {
	std::mutex lock;
	std::vector<Entry> open;
};

Registry &registry()
{
	static Registry *r = new Registry();
	return *r;
}

std::string socket_key(const char *socket)
{
	char buf[4096];

	if (socket)
		return socket;
	if (uh_default_socket(buf, sizeof(buf)) != 0)
		return "";
	return buf;
}

}  // namespace

int registry_open(const char *socket, bool readonly, int timeout_ms, uh_heap **out)
{
	Registry &r = registry();
	std::string key = socket_key(socket);
	std::lock_guard<std::mutex> g(r.lock);
	int rc = UH_ENOTFOUND;

	for (const Entry &e : r.open) {
		if (e.socket != key || (e.readonly && !readonly))
			continue;
		rc = uh_session_open(e.h, readonly ? UH_READONLY : 0, out);
		break;
	}
	/* No session to open from, or heapd now serves another heap file than
	 * the one this process mapped: map anew. */
	if (rc == UH_ENOTFOUND || rc == UH_EIO)
		rc = uh_connect_timeout(socket, readonly ? UH_READONLY : 0, timeout_ms, out);
	if (rc == 0)
		r.open.push_back(Entry{ key, *out, readonly });
	return rc;
}

void registry_close(uh_heap *h)
{
	Registry &r = registry();

	if (!h)
		return;
	{
		std::lock_guard<std::mutex> g(r.lock);
		for (size_t i = 0; i < r.open.size(); i++) {
			if (r.open[i].h == h) {
				r.open.erase(r.open.begin() + (long)i);
				break;
			}
		}
	}
	uh_disconnect(h);
}

}  // namespace uhn
