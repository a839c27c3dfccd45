/*
 * metrics_http.h -- a minimal HTTP/1.x server for Prometheus to scrape:
 * GET /metrics answers with a text the caller makes at each request. It
 * serves heapd --metrics HOST:PORT (a thread of heapd, which builds the
 * text itself) and heapctl metrics --listen HOST:PORT (an exporter process
 * that asks heapd at each scrape).
 *
 * One connection at a time, one request per connection (every answer says
 * Connection: close). A client cannot hold the server: the request head
 * must arrive whole within 5 s and 8 KiB; anything that is not a request
 * line gets 400, another method 405, another path 404; a client that
 * hangs up raises no SIGPIPE.
 */
#ifndef UH_METRICS_HTTP_H
#define UH_METRICS_HTTP_H

#include <functional>
#include <string>

namespace uhmetrics {

/* A listening TCP socket on listen, "HOST:PORT" ("[V6]:PORT"; PORT 0: a
 * free one), or -1 with *err saying why; *malformed is set when listen is
 * not of that form. */
int http_listen(const std::string &listen, std::string *err, bool *malformed);

/* The numeric address fd is bound to, as HOST:PORT ([HOST]:PORT for v6). */
std::string http_bound_address(int fd);

/* Accept on the listening fd and answer each connection (GET /metrics:
 * scrape()'s text) until stop_fd (-1: none) is readable: then 0; or -1
 * with *err set when accept fails for good. */
int http_serve(int fd, int stop_fd, const std::function<std::string()> &scrape,
	       std::string *err);

} /* namespace uhmetrics */

#endif /* UH_METRICS_HTTP_H */
