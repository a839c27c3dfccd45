/*
 * server_util.cc -- helpers of the gRPC adapter (see server_util.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "heapd.h"
#include "server_util.h"
#include "utf8.h"

namespace heapd {

grpc::Status uh_to_status(int rc, const char *err)
{
	std::string msg = err && *err ? err : "";
	if (msg.empty())
		msg = "heapd core error " + std::to_string(rc);
	switch (rc) {
	case UH_EINVAL:
		return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, msg);
	case UH_ENOSPC:
		return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, msg);
	case UH_ECLASSMISMATCH:
		if (msg.compare(0, 15, "ClassMismatch: ") != 0)
			msg = "ClassMismatch: " + msg;
		return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, msg);
	case UH_ENOTFOUND:
		return grpc::Status(grpc::StatusCode::NOT_FOUND, msg);
	case UH_ESTATE:
		return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, msg);
	default:
		return grpc::Status(grpc::StatusCode::INTERNAL, msg);
	}
}

grpc::Status status_f(grpc::StatusCode code, const char *fmt, ...)
{
	char buf[kErrLen];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return grpc::Status(code, buf);
}

bool name_ok(const std::string &s, size_t max, const char *what, std::string *why)
{
	if (s.empty())
		*why = std::string(what) + " is empty";
	else if (s.size() > max)
		*why = std::string(what) + " is " + std::to_string(s.size()) +
		       " bytes, at most " + std::to_string(max) + " allowed";
	else if (memchr(s.data(), '\0', s.size()))
		*why = std::string(what) + " contains a NUL byte";
	else
		return true;
	return false;
}

/* Heap and class names are checked when created, but a damaged heap could
 * still hold bytes protobuf would refuse: '?' stands in for them. */
std::string utf8_clean(const char *p, size_t n)
{
	std::string out(n, '\0');
	uh_utf8_clean(p, n, &out[0]);
	return out;
}

std::string log_quote(const std::string &s, size_t max)
{
	std::string out = "\"";
	for (size_t i = 0; i < s.size() && i < max; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\') {
			out += '\\';
			out += (char)c;
		} else if (c < 0x20 || c == 0x7f) {
			char b[8];
			snprintf(b, sizeof(b), "\\x%02x", c);
			out += b;
		} else {
			out += (char)c;
		}
	}
	if (s.size() > max)
		out += "...";
	out += '"';
	return out;
}

} /* namespace heapd */
