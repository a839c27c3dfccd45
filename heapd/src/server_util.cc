/*
 * server_util.cc -- helpers of the gRPC adapter (see server_util.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "heapd.h"
#include "server_util.h"

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

namespace {

/* Length of the valid UTF-8 sequence at p (n bytes left), 0 if invalid. */
size_t utf8_seq(const unsigned char *p, size_t n)
{
	unsigned char c = p[0];
	size_t len;
	unsigned min;
	unsigned cp;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, min = 0x80, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, min = 0x800, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, min = 0x10000, cp = c & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

} /* namespace */

std::string utf8_clean(const char *p, size_t n)
{
	std::string out;
	out.reserve(n);
	const unsigned char *u = (const unsigned char *)p;
	for (size_t i = 0; i < n;) {
		size_t len = utf8_seq(u + i, n - i);
		if (len == 0) {
			out += "\xef\xbf\xbd";
			i++;
		} else {
			out.append(p + i, len);
			i += len;
		}
	}
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
