/*
 * metrics.h -- heapd's state and counters in Prometheus' text exposition
 * format (version 0.0.4), for `heapctl metrics`: printed once (for
 * node_exporter's textfile collector) or served over HTTP
 * (metrics_http.h). The metric names, types and meanings are listed in
 * metrics.cc, the one place that writes them.
 */
#ifndef HEAPCTL_METRICS_H
#define HEAPCTL_METRICS_H

#include <string>

#include "uniheap/v1/heapd.pb.h"

namespace heapctl {

/* The exposition of one Status and one Stats answer of the same heapd:
 * every sample carries the label heap="<heap name>". */
std::string metrics_text(const uniheap::v1::StatusResponse &status,
			 const uniheap::v1::StatsResponse &stats);

/* The exposition when heapd does not answer: uniheap_up 0 alone. */
std::string metrics_down_text();

} /* namespace heapctl */

#endif /* HEAPCTL_METRICS_H */
