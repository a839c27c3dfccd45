/*
 * server_metrics.h -- heapd --metrics HOST:PORT: a thread of heapd that
 * serves GET /metrics over plain HTTP in Prometheus' text format. Each
 * scrape builds the same Status and Stats answers the control protocol
 * gives heapctl (by calling the service's handlers) and writes them with
 * the one metrics writer heapctl uses too (metrics/metrics_text.h), so
 * both ways of scraping show the same names and values.
 */
#ifndef HEAPD_SERVER_METRICS_H
#define HEAPD_SERVER_METRICS_H

#include <stddef.h>

#include <thread>

namespace heapd {

class Service;

class MetricsServer {
public:
	explicit MetricsServer(Service *service) : service_(service) {}
	~MetricsServer() { stop(); }

	/* Listen on listen (HOST:PORT; PORT 0: a free one, logged) and start
	 * the thread. false with err set (one line) if either fails. */
	bool start(const char *listen, char *err, size_t errlen);
	/* Stop and join the thread, close the socket. Idempotent. */
	void stop();

private:
	Service *service_;
	int fd_ = -1;
	int wake_[2] = { -1, -1 };	/* stop() writes to wake_[1] */
	std::thread thread_;
};

} /* namespace heapd */

#endif /* HEAPD_SERVER_METRICS_H */
