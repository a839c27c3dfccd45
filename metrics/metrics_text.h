/*
 * metrics_text.h -- heapd's state and counters in Prometheus' text
 * exposition format (version 0.0.4), written from one Status and one
 * Stats answer of the control protocol. The one place that writes them,
 * for both ways they are served: heapd --metrics HOST:PORT (heapd builds
 * the two answers itself) and heapctl metrics (which asks heapd for them).
 * The metric names, types and meanings are listed in metrics_text.cc and
 * in the README ("Metrics for Prometheus").
 */
#ifndef UH_METRICS_TEXT_H
#define UH_METRICS_TEXT_H

#include <string>

#include "uniheap/v1/heapd.pb.h"

namespace uhmetrics {

/* The exposition of one Status and one Stats answer of the same heapd:
 * every sample carries the label heap="<heap name>". */
std::string metrics_text(const uniheap::v1::StatusResponse &status,
			 const uniheap::v1::StatsResponse &stats);

/* The exposition when heapd does not answer: uniheap_up 0 alone. */
std::string metrics_down_text();

} /* namespace uhmetrics */

#endif /* UH_METRICS_TEXT_H */
