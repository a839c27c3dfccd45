/*
 * server_util.h -- small helpers of the gRPC adapter: error mapping,
 * argument checks, text that is safe to send or log.
 */
#ifndef HEAPD_SERVER_UTIL_H
#define HEAPD_SERVER_UTIL_H

#include <stddef.h>

#include <string>

#include <grpcpp/support/status.h>

namespace heapd {

/* Size of the err buffers handed to the core. */
constexpr size_t kErrLen = 512;

/* A core error (negative UH_E* code + its message) as a gRPC status:
 * UH_EINVAL -> INVALID_ARGUMENT, UH_ENOSPC -> RESOURCE_EXHAUSTED,
 * UH_ECLASSMISMATCH -> FAILED_PRECONDITION (message starts with
 * "ClassMismatch: "), UH_ENOTFOUND -> NOT_FOUND, anything else INTERNAL. */
grpc::Status uh_to_status(int rc, const char *err);

/* A status with a printf-formatted message. */
grpc::Status status_f(grpc::StatusCode code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Checks a client-supplied name: 1..max bytes, no NUL. On failure *why
 * names the problem, with what (e.g. "class name") in front. */
bool name_ok(const std::string &s, size_t max, const char *what, std::string *why);

/* Bytes from the mapping or a client as valid UTF-8 (invalid sequences
 * become U+FFFD), so protobuf never refuses to serialize them. */
std::string utf8_clean(const char *p, size_t n);

/* s as a double-quoted log value: at most max bytes, quotes, backslashes
 * and control bytes escaped, so one log line stays one line. */
std::string log_quote(const std::string &s, size_t max = 128);

} /* namespace heapd */

#endif /* HEAPD_SERVER_UTIL_H */
