/*
 * metrics_http.cc -- the minimal HTTP/1.x server of metrics_http.h.
 * Nothing a client sends can crash or stall it for long: the head is read
 * with one deadline for the whole of it and a size limit; a head that
 * ends with its blank line and starts with METHOD SP TARGET [SP HTTP/1.x]
 * (line ends CRLF or LF) is answered, anything else (cut short, too
 * long, not HTTP) gets 400; the socket is closed after each answer.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "metrics_http.h"

namespace uhmetrics {

namespace {

constexpr size_t kMaxRequest = 8192;
constexpr int kReadTimeoutMs = 5000;

int64_t now_ms()
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait until fd is readable (1), stop_fd is (0), or ms pass (0). */
int wait_readable(int fd, int stop_fd, int ms)
{
	struct pollfd p[2] = { { fd, POLLIN, 0 }, { stop_fd, POLLIN, 0 } };
	int n = stop_fd >= 0 ? 2 : 1;
	for (;;) {
		int rc = poll(p, (nfds_t)n, ms);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc <= 0 || (n == 2 && p[1].revents))
			return 0;
		return 1;
	}
}

/* The request head, up to its blank line, as much as came within the
 * deadline and size limit, or until the client stopped sending. */
std::string read_head(int c, int stop_fd)
{
	std::string head;
	char buf[1024];
	int64_t deadline = now_ms() + kReadTimeoutMs;
	while (head.size() < kMaxRequest && head.find("\r\n\r\n") == std::string::npos &&
	       head.find("\n\n") == std::string::npos) {
		int64_t left = deadline - now_ms();
		if (left <= 0 || !wait_readable(c, stop_fd, (int)left))
			break;
		ssize_t n = recv(c, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		head.append(buf, (size_t)n);
	}
	return head;
}

void send_all(int c, const std::string &s)
{
	size_t off = 0;
	while (off < s.size()) {
		ssize_t n = send(c, s.data() + off, s.size() - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		off += (size_t)n;
	}
}

std::string response(const char *status, const char *type, const std::string &body,
		     const char *extra = "")
{
	return std::string("HTTP/1.0 ") + status + "\r\nContent-Type: " + type +
	       "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" + extra +
	       "Connection: close\r\n\r\n" + body;
}

struct request {
	std::string method, target;
};

/* "METHOD SP TARGET [SP HTTP/1.x]": false for anything else. */
bool parse_line(const std::string &head, request *r)
{
	std::string line = head.substr(0, head.find('\n'));
	if (!line.empty() && line.back() == '\r')
		line.pop_back();
	size_t sp1 = line.find(' ');
	if (sp1 == std::string::npos || sp1 == 0)
		return false;
	size_t sp2 = line.find(' ', sp1 + 1);
	r->method = line.substr(0, sp1);
	r->target = line.substr(sp1 + 1, sp2 == std::string::npos ? std::string::npos
								  : sp2 - sp1 - 1);
	std::string version = sp2 == std::string::npos ? "HTTP/1.0" : line.substr(sp2 + 1);
	for (char ch : r->method)
		if (ch < 'A' || ch > 'Z')
			return false;
	for (char ch : r->target)
		if ((unsigned char)ch <= ' ' || ch == 127)
			return false;
	return !r->target.empty() && r->target[0] == '/' &&
	       (version == "HTTP/1.0" || version == "HTTP/1.1");
}

void answer(int c, int stop_fd, const std::function<std::string()> &scrape)
{
	std::string head = read_head(c, stop_fd);
	if (head.empty())
		return;	/* nothing came: nobody to answer */
	request r;
	bool whole = head.find("\r\n\r\n") != std::string::npos ||
		     head.find("\n\n") != std::string::npos;
	if (!whole || !parse_line(head, &r))
		send_all(c, response("400 Bad Request", "text/plain", "not an HTTP/1.x request\n"));
	else if (r.method != "GET")
		send_all(c, response("405 Method Not Allowed", "text/plain", "GET only\n",
				     "Allow: GET\r\n"));
	else if (r.target.substr(0, r.target.find('?')) != "/metrics")
		send_all(c, response("404 Not Found", "text/plain", "see /metrics\n"));
	else
		send_all(c, response("200 OK", "text/plain; version=0.0.4; charset=utf-8",
				     scrape()));
}

} /* namespace */

int http_listen(const std::string &listen, std::string *err, bool *malformed)
{
	*malformed = false;
	size_t colon = listen.rfind(':');
	if (colon == std::string::npos || colon + 1 == listen.size()) {
		*malformed = true;
		*err = "wants HOST:PORT, not '" + listen + "'";
		return -1;
	}
	std::string host = listen.substr(0, colon), port = listen.substr(colon + 1);
	if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
		host = host.substr(1, host.size() - 2);
	struct addrinfo hints = {}, *res = nullptr;
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &res);
	if (rc != 0) {
		*err = listen + ": " + gai_strerror(rc);
		return -1;
	}
	int fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, res->ai_protocol);
	int one = 1;
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) != 0 || ::listen(fd, 16) != 0) {
		*err = "cannot listen on " + listen + ": " + strerror(errno);
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd;
}

std::string http_bound_address(int fd)
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

int http_serve(int fd, int stop_fd, const std::function<std::string()> &scrape,
	       std::string *err)
{
	for (;;) {	/* until stopped: one connection per round */
		if (!wait_readable(fd, stop_fd, -1))
			return 0;
		int c = accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
		if (c < 0) {
			if (errno == EINTR || errno == ECONNABORTED || errno == EAGAIN)
				continue;	/* this connection, not the server */
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM) {
				/* Short of resources: the connection waits in the
				 * backlog; try again in a while, not in a spin. */
				struct timespec ts = { 0, 100 * 1000 * 1000 };
				nanosleep(&ts, nullptr);
				continue;
			}
			*err = std::string("accept: ") + strerror(errno);
			return -1;
		}
		answer(c, stop_fd, scrape);
		close(c);
	}
}

} /* namespace uhmetrics */
