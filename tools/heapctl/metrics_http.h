/*
 * metrics_http.h -- `heapctl metrics --listen HOST:PORT`: a minimal HTTP/1.0
 * server for Prometheus to scrape. heapd itself serves only its UNIX socket
 * (its unit allows it no other address family), so the exporter is this
 * separate process, which asks heapd afresh at every scrape.
 */
#ifndef HEAPCTL_METRICS_HTTP_H
#define HEAPCTL_METRICS_HTTP_H

#include <functional>
#include <string>

namespace heapctl {

/* Listens on listen ("HOST:PORT"; PORT 0 picks a free one), prints
 * "serving http://HOST:PORT/metrics" on stdout once it accepts, and
 * answers GET /metrics with scrape()'s text, anything else with 404, one
 * connection at a time, until killed. Returns only on a setup error (after
 * saying why on stderr), with 1, or 64 for a malformed HOST:PORT. */
int serve_metrics(const std::string &listen, const std::function<std::string()> &scrape);

} /* namespace heapctl */

#endif /* HEAPCTL_METRICS_HTTP_H */
