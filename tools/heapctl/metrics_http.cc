/*
 * metrics_http.cc -- the HTTP side of `heapctl metrics --listen` (see
 * metrics_http.h). One request per connection (the response says
 * Connection: close), read with a timeout so that a silent client cannot
 * hold the only thread; requests larger than 8 KiB are cut off.
 */
#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "metrics_http.h"

namespace heapctl {

namespace {

constexpr int kExitFailed = 1, kExitUsage = 64;
constexpr size_t kMaxRequest = 8192;
constexpr int kReadTimeoutS = 5;

/* A listening socket on host:port, or -1 after saying why. */
int listen_on(const std::string &host, const std::string &port)
{
	struct addrinfo hints = {}, *res = nullptr;
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &res);
	if (rc != 0) {
		fprintf(stderr, "heapctl: --listen %s:%s: %s\n", host.c_str(), port.c_str(),
			gai_strerror(rc));
		return -1;
	}
	int fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, res->ai_protocol);
	int one = 1;
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, 16) != 0) {
		fprintf(stderr, "heapctl: cannot listen on %s:%s: %s\n", host.c_str(),
			port.c_str(), strerror(errno));
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd;
}

/* The numeric address fd is bound to, as HOST:PORT ([HOST]:PORT for v6). */
std::string bound_address(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char host[NI_MAXHOST], port[NI_MAXSERV];
	if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0 ||
	    getnameinfo((struct sockaddr *)&ss, len, host, sizeof(host), port, sizeof(port),
			NI_NUMERICHOST | NI_NUMERICSERV) != 0)
		return "?";
	if (ss.ss_family == AF_INET6)
		return std::string("[") + host + "]:" + port;
	return std::string(host) + ":" + port;
}

/* The request head (up to the blank line), or "" on timeout or error. */
std::string read_head(int c)
{
	struct timeval tv = { kReadTimeoutS, 0 };
	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	std::string head;
	char buf[1024];
	while (head.find("\r\n\r\n") == std::string::npos && head.size() < kMaxRequest) {
		ssize_t n = read(c, buf, sizeof(buf));
		if (n <= 0)
			return "";
		head.append(buf, (size_t)n);
	}
	return head;
}

void write_all(int c, const std::string &s)
{
	size_t off = 0;
	while (off < s.size()) {
		ssize_t n = write(c, s.data() + off, s.size() - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		off += (size_t)n;
	}
}

std::string response(const char *status, const char *type, const std::string &body)
{
	return std::string("HTTP/1.0 ") + status + "\r\nContent-Type: " + type +
	       "\r\nContent-Length: " + std::to_string(body.size()) +
	       "\r\nConnection: close\r\n\r\n" + body;
}

void answer(int c, const std::function<std::string()> &scrape)
{
	std::string head = read_head(c);
	if (head.empty())
		return;
	std::string line = head.substr(0, head.find("\r\n"));
	/* "GET /metrics HTTP/1.1", or with a query string. */
	bool get = line.rfind("GET ", 0) == 0;
	std::string target = get ? line.substr(4, line.find(' ', 4) - 4) : "";
	std::string path = target.substr(0, target.find('?'));
	if (!get)
		write_all(c, response("405 Method Not Allowed", "text/plain", "GET only\n"));
	else if (path != "/metrics")
		write_all(c, response("404 Not Found", "text/plain", "see /metrics\n"));
	else
		write_all(c, response("200 OK", "text/plain; version=0.0.4; charset=utf-8",
				      scrape()));
}

} /* namespace */

int serve_metrics(const std::string &listen, const std::function<std::string()> &scrape)
{
	size_t colon = listen.rfind(':');
	if (colon == std::string::npos || colon + 1 == listen.size()) {
		fprintf(stderr, "heapctl: --listen wants HOST:PORT, not '%s'\n", listen.c_str());
		return kExitUsage;
	}
	std::string host = listen.substr(0, colon);
	if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
		host = host.substr(1, host.size() - 2);
	int fd = listen_on(host, listen.substr(colon + 1));
	if (fd < 0)
		return kExitFailed;
	/* A scraper that hangs up mid-answer must not kill the exporter. */
	signal(SIGPIPE, SIG_IGN);
	printf("serving http://%s/metrics\n", bound_address(fd).c_str());
	fflush(stdout);
	for (;;) {
		int c = accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
		if (c < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			fprintf(stderr, "heapctl: accept: %s\n", strerror(errno));
			close(fd);
			return kExitFailed;
		}
		answer(c, scrape);
		close(c);
	}
}

} /* namespace heapctl */
