/*
 * server_metrics.cc -- heapd's metrics endpoint (see server_metrics.h).
 * The thread answers one connection at a time (metrics_http.h bounds what
 * a client can make it wait); it starts after the signal mask of serve()
 * is set, so SIGTERM never lands on it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <exception>
#include <string>

#include "heapd.h"
#include "metrics_http.h"
#include "metrics_text.h"
#include "server_metrics.h"
#include "server_service.h"

namespace pb = uniheap::v1;

namespace heapd {

namespace {

/* The page of one scrape: what heapctl metrics would print now. */
std::string scrape(Service *service)
{
	pb::StatusRequest status_req;
	pb::StatsRequest stats_req;
	pb::StatusResponse status;
	pb::StatsResponse stats;
	/* The handlers read no call context. */
	if (!service->Status(nullptr, &status_req, &status).ok() ||
	    !service->Stats(nullptr, &stats_req, &stats).ok())
		return uhmetrics::metrics_down_text();
	return uhmetrics::metrics_text(status, stats);
}

} /* namespace */

bool MetricsServer::start(const char *listen, char *err, size_t errlen)
{
	std::string why;
	bool malformed;
	fd_ = uhmetrics::http_listen(listen, &why, &malformed);
	if (fd_ < 0) {
		snprintf(err, errlen, "--metrics %s", why.c_str());
		return false;
	}
	if (pipe2(wake_, O_CLOEXEC) != 0) {
		snprintf(err, errlen, "pipe(): %s", strerror(errno));
		stop();
		return false;
	}
	try {
		thread_ = std::thread([this] {
			std::string e;
			if (uhmetrics::http_serve(fd_, wake_[0], [this] { return scrape(service_); },
						  &e) != 0)
				hd_log("error", "metrics", "reason=\"%s\"", e.c_str());
		});
	} catch (const std::exception &ex) {
		snprintf(err, errlen, "cannot start the metrics thread: %s", ex.what());
		stop();
		return false;
	}
	hd_log("info", "metrics", "listen=%s path=/metrics",
	       uhmetrics::http_bound_address(fd_).c_str());
	return true;
}

void MetricsServer::stop()
{
	if (thread_.joinable()) {
		char b = 1;
		ssize_t n = write(wake_[1], &b, 1);
		(void)n;
		thread_.join();
	}
	for (int *fd : { &wake_[0], &wake_[1], &fd_ }) {
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
	}
}

} /* namespace heapd */
