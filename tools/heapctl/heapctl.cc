/*
 * heapctl.cc -- heapd's admin command line.
 *
 *   heapctl [--socket PATH] [--json] <status|classes|roots|stats|health|check>
 *   heapctl [--socket PATH] [--json] gc [--wait [--repeat N]]
 *   heapctl [--socket PATH] metrics [--listen HOST:PORT]
 *
 * Talks the public protocol (schemas/uniheap/v1/heapd.proto) like any
 * other gRPC tool; it does not link libuniheap. Exit codes: 0 ok, 1 heapd
 * answered with an error (or health is not SERVING), 2 heapd unreachable,
 * 64 usage error.
 */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>
#include <unistd.h>

#include <google/protobuf/util/json_util.h>
#include <grpcpp/grpcpp.h>

#include "uniheap/v1/heapd.grpc.pb.h"

#include "health.h"
#include "metrics_http.h"
#include "metrics_text.h"
#include "print.h"
#include "sockpath.h"
#include "uniheap.h"

namespace pb = uniheap::v1;

namespace {

constexpr int kExitOk = 0, kExitFailed = 1, kExitUnreachable = 2, kExitUsage = 64;
constexpr int kTimeoutMs = 5000;

const char kUsage[] =
	"usage: heapctl [--socket PATH] [--json] <command>\n"
	"       heapctl --help | --version\n"
	"\n"
	"commands:\n"
	"  status    heap and daemon state\n"
	"  classes   the class table\n"
	"  roots     named durable roots\n"
	"  stats     heapd's counters\n"
	"  health    the standard gRPC health check (exit 0 when SERVING)\n"
	"  gc        start an online GC cycle (or report the one running); with\n"
	"            --wait, wait for it to end and print what it did\n"
	"  grow SIZE grow the heap file to at least SIZE bytes (K, M or G suffix)\n"
	"            while clients run, up to the --max-size it was created with\n"
	"  check     walk the heap from its roots: objects, references, maps and\n"
	"            sorted maps (runs the uniheap-check program installed with\n"
	"            heapctl)\n"
	"  metrics   state and counters in Prometheus' text format (for\n"
	"            node_exporter's textfile collector); with --listen, served\n"
	"            over HTTP at /metrics, heapd asked at each scrape\n"
	"\n"
	"options:\n"
	"  --socket PATH  heapd's socket (default: $UNIHEAP_SOCKET, else\n"
	"                 $XDG_RUNTIME_DIR/uniheap/heapd.sock, else\n"
	"                 /tmp/uniheap-$UID/heapd.sock; see uh_default_socket)\n"
	"  --json         print the response as JSON (proto3 JSON mapping, .proto\n"
	"                 field names)\n"
	"  --listen HOST:PORT  metrics: serve them over HTTP there (PORT 0: any\n"
	"                 free port; the address is printed)\n"
	"  --wait         gc: wait for the cycle to end (no time limit)\n"
	"  --repeat N     gc --wait: run N cycles back to back, each printed as it\n"
	"                 ends (0: until heapctl is stopped); exit 1 if one was\n"
	"                 given up\n"
	"  --help         this text\n"
	"  --version      print the version\n";

struct Args {
	std::string socket;
	std::string command;
	std::string operand;	/* grow SIZE */
	std::string listen;	/* metrics --listen */
	bool json = false;
	bool wait = false;	/* gc --wait */
	long repeat = 1;	/* gc --wait --repeat: cycles, 0 = no end */
};

/* The rule of uh_default_socket() (uniheap.h); heapctl does not link
 * libuniheap, so it takes the rule from the shared sockpath.c. Returns ""
 * after saying why there is none. */
std::string default_socket()
{
	char buf[4096], err[512];
	if (uh_sockpath_default(buf, sizeof(buf), err, sizeof(err)) != 0) {
		fprintf(stderr, "heapctl: %s\n", err);
		return "";
	}
	return buf;
}

int usage_error(const char *fmt, const char *what)
{
	fprintf(stderr, "heapctl: ");
	fprintf(stderr, fmt, what);
	fprintf(stderr, "\n%s", kUsage);
	return kExitUsage;
}

/* Fills a; returns -1 to go on, else the exit code. */
int parse_args(int argc, char **argv, Args *a)
{
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
			fputs(kUsage, stdout);
			return kExitOk;
		} else if (!strcmp(arg, "--version")) {
			printf("heapctl %d.%d.%d\n", UH_VERSION_MAJOR, UH_VERSION_MINOR,
			       UH_VERSION_PATCH);
			return kExitOk;
		} else if (!strcmp(arg, "--json")) {
			a->json = true;
		} else if (!strcmp(arg, "--wait")) {
			a->wait = true;
		} else if (!strcmp(arg, "--repeat")) {
			char *end = NULL;
			if (++i >= argc)
				return usage_error("%s needs a number", arg);
			a->repeat = strtol(argv[i], &end, 10);
			if (!*argv[i] || *end || a->repeat < 0)
				return usage_error("--repeat %s: give a whole number, 0 or more", argv[i]);
		} else if (!strcmp(arg, "--socket")) {
			if (++i >= argc)
				return usage_error("%s needs a path", arg);
			a->socket = argv[i];
		} else if (!strncmp(arg, "--socket=", 9)) {
			a->socket = arg + 9;
		} else if (!strcmp(arg, "--listen")) {
			if (++i >= argc)
				return usage_error("%s needs HOST:PORT", arg);
			a->listen = argv[i];
		} else if (arg[0] == '-' && arg[1]) {
			return usage_error("unknown option %s", arg);
		} else if (a->command == "grow" && a->operand.empty()) {
			a->operand = arg;
		} else if (!a->command.empty()) {
			return usage_error("one command at a time (extra argument '%s')", arg);
		} else {
			a->command = arg;
		}
	}
	if (a->command.empty())
		return usage_error("%s", "no command given");
	if (a->command == "grow" && a->operand.empty())
		return usage_error("%s", "grow needs a SIZE");
	if (!a->listen.empty() && a->command != "metrics")
		return usage_error("%s", "--listen goes with the command metrics");
	if (a->wait && a->command != "gc")
		return usage_error("%s", "--wait goes with the command gc");
	if (a->repeat != 1 && !a->wait)
		return usage_error("%s", "--repeat goes with gc --wait");
	if (a->socket.empty() && (a->socket = default_socket()).empty())
		return kExitUnreachable;
	return -1;
}

void set_deadline(grpc::ClientContext *ctx)
{
	ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(kTimeoutMs));
}

int rpc_failed(const Args &a, const char *rpc, const grpc::Status &s)
{
	grpc::StatusCode c = s.error_code();
	if (c == grpc::StatusCode::UNAVAILABLE || c == grpc::StatusCode::DEADLINE_EXCEEDED) {
		fprintf(stderr, "heapctl: cannot reach heapd at %s: %s\n", a.socket.c_str(),
			s.error_message().c_str());
		return kExitUnreachable;
	}
	fprintf(stderr, "heapctl: %s failed: %s\n", rpc, s.error_message().c_str());
	return kExitFailed;
}

int print_json(const google::protobuf::Message &m)
{
	google::protobuf::util::JsonPrintOptions o;
	o.always_print_primitive_fields = true;
	/* Field names as the .proto spells them (freed_objects), which is
	 * what scripts grep for; 64-bit numbers are JSON strings, as the
	 * proto3 JSON mapping says. */
	o.preserve_proto_field_names = true;
	std::string out;
	if (!google::protobuf::util::MessageToJsonString(m, &out, o).ok()) {
		fprintf(stderr, "heapctl: cannot print the answer as JSON\n");
		return kExitFailed;
	}
	printf("%s\n", out.c_str());
	return kExitOk;
}

/* One unary Heapd call, printed as JSON or by print_fn. */
template <typename Req, typename Resp, typename Call, typename Print>
int run(const Args &a, pb::Heapd::Stub *stub, const char *rpc, Call call, Print print_fn)
{
	Req req;
	Resp resp;
	grpc::ClientContext ctx;
	set_deadline(&ctx);
	grpc::Status s = (stub->*call)(&ctx, req, &resp);
	if (!s.ok())
		return rpc_failed(a, rpc, s);
	if (a.json)
		return print_json(resp);
	print_fn(stdout, resp);
	return kExitOk;
}

int run_health(const Args &a, grpc::Channel *ch)
{
	grpc::ClientContext ctx;
	set_deadline(&ctx);
	std::unique_ptr<google::protobuf::Message> resp;
	grpc::Status s = heapctl::health_check(ch, &ctx, "", &resp);
	if (!s.ok())
		return rpc_failed(a, "Health/Check", s);
	std::string name = heapctl::health_status_name(*resp);
	int rc = name == "SERVING" ? kExitOk : kExitFailed;
	if (a.json)
		return print_json(*resp) ? kExitFailed : rc;
	printf("%s\n", name.c_str());
	return rc;
}

/* uniheap-check beside heapctl (the build tree), else in the installed
 * libexec folder relative to heapctl's own; "" if neither is there. */
std::string find_check(std::string *tried)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		*tried = "(cannot read /proc/self/exe)";
		return "";
	}
	self[n] = '\0';
	std::string dir = dirname(self);
	for (const std::string &exe : { dir + "/uniheap-check",
					dir + "/" UH_CHECK_FROM_BIN "/uniheap-check" }) {
		if (access(exe.c_str(), X_OK) == 0)
			return exe;
		*tried += (tried->empty() ? "" : ", ") + exe;
	}
	return "";
}

/* check needs a libuniheap session, and libuniheap carries its own copy
 * of the protocol code, which libprotobuf refuses to load twice into one
 * process: so heapctl runs the separate uniheap-check program. */
int run_check(const Args &a)
{
	std::string tried;
	std::string exe = find_check(&tried);
	if (exe.empty()) {
		fprintf(stderr, "heapctl: uniheap-check is not installed (looked for %s)\n",
			tried.c_str());
		return kExitFailed;
	}
	std::vector<char *> argv = { (char *)exe.c_str(), (char *)"--socket",
				     (char *)a.socket.c_str() };
	if (a.json)
		argv.push_back((char *)"--json");
	argv.push_back(nullptr);
	execv(exe.c_str(), argv.data());
	fprintf(stderr, "heapctl: cannot run %s: %s\n", exe.c_str(), strerror(errno));
	return kExitFailed;
}

/* One scrape: Status and Stats, as Prometheus text; "" after saying why
 * when heapd does not answer (*rc: the exit code). */
std::string scrape(const Args &a, pb::Heapd::Stub *stub, int *rc)
{
	pb::StatusResponse status;
	pb::StatsResponse stats;
	grpc::ClientContext c1, c2;
	set_deadline(&c1);
	grpc::Status s = stub->Status(&c1, pb::StatusRequest(), &status);
	if (s.ok()) {
		set_deadline(&c2);
		s = stub->Stats(&c2, pb::StatsRequest(), &stats);
	}
	if (!s.ok()) {
		*rc = rpc_failed(a, "Status/Stats", s);
		return "";
	}
	*rc = kExitOk;
	return uhmetrics::metrics_text(status, stats);
}

/* metrics --listen: say where once it accepts, then serve until killed. */
int serve_metrics(const Args &a, pb::Heapd::Stub *stub)
{
	std::string err;
	bool malformed;
	int fd = uhmetrics::http_listen(a.listen, &err, &malformed);
	if (fd < 0)
		return malformed ? usage_error("--listen %s", err.c_str())
				 : (fprintf(stderr, "heapctl: %s\n", err.c_str()), kExitFailed);
	printf("serving http://%s/metrics\n", uhmetrics::http_bound_address(fd).c_str());
	fflush(stdout);
	uhmetrics::http_serve(fd, -1, [&]() {
		int rc;
		std::string t = scrape(a, stub, &rc);
		return rc == kExitOk ? t : uhmetrics::metrics_down_text();
	}, &err);
	fprintf(stderr, "heapctl: %s\n", err.c_str());
	close(fd);
	return kExitFailed;
}

int run_metrics(const Args &a, pb::Heapd::Stub *stub)
{
	int rc;
	if (!a.listen.empty())
		return serve_metrics(a, stub);
	std::string t = scrape(a, stub, &rc);
	fputs(t.c_str(), stdout);
	return rc;
}

/* One Gc request, its answer printed; *given_up says whether the cycle
 * was given up. Returns kExitOk or the failure's exit code. */
int gc_once(const Args &a, pb::Heapd::Stub *stub, bool *given_up)
{
	pb::GcRequest req;
	pb::GcResponse resp;
	grpc::ClientContext ctx;
	req.set_wait(a.wait);
	if (!a.wait)
		set_deadline(&ctx);
	grpc::Status s = stub->Gc(&ctx, req, &resp);
	if (!s.ok())
		return rpc_failed(a, "Gc", s);
	*given_up = resp.cycle().outcome().rfind("given up", 0) == 0;
	int rc = kExitOk;
	if (a.json)
		rc = print_json(resp);
	else
		heapctl::print_gc(stdout, resp);
	fflush(stdout);	/* --repeat: each cycle is read as it ends */
	return rc;
}

/* gc [--wait [--repeat N]]: a cycle can take as long as the mark of the
 * whole heap, so --wait has no deadline. --repeat runs cycles back to
 * back from one process (a benchmark's load, without a process start per
 * cycle); it stops at the first request that fails. */
int run_gc(const Args &a, pb::Heapd::Stub *stub)
{
	bool any_given_up = false;
	for (long i = 0; a.repeat == 0 || i < a.repeat; i++) {	/* --repeat, or a signal */
		bool given_up = false;
		int rc = gc_once(a, stub, &given_up);
		if (rc != kExitOk)
			return rc;
		any_given_up = any_given_up || given_up;
	}
	return any_given_up ? kExitFailed : kExitOk;
}

/* "64M" -> bytes; false when it is not a size. */
bool parse_size(const std::string &s, uint64_t *out)
{
	char *end = NULL;
	errno = 0;
	unsigned long long v = strtoull(s.c_str(), &end, 10);
	if (s.empty() || s[0] == '-' || end == s.c_str() || errno)
		return false;
	int shift = 0;
	switch (*end) {
	case 'K': case 'k': shift = 10; end++; break;
	case 'M': case 'm': shift = 20; end++; break;
	case 'G': case 'g': shift = 30; end++; break;
	case 'T': case 't': shift = 40; end++; break;
	}
	if (*end || (shift && v > (~0ull >> shift)))
		return false;
	*out = v << shift;
	return true;
}

/* grow SIZE: one Grow request. A growth allocates the new part's blocks,
 * which takes time in proportion (on tmpfs ~0.3 s a GiB): no deadline. */
int run_grow(const Args &a, pb::Heapd::Stub *stub)
{
	pb::GrowRequest req;
	pb::GrowResponse resp;
	grpc::ClientContext ctx;
	uint64_t size = 0;
	if (!parse_size(a.operand, &size))
		return usage_error("grow: '%s' is not a size (e.g. 1G)", a.operand.c_str());
	req.set_size(size);
	grpc::Status s = stub->Grow(&ctx, req, &resp);
	if (!s.ok())
		return rpc_failed(a, "Grow", s);
	if (a.json)
		return print_json(resp);
	heapctl::print_grow(stdout, resp);
	return kExitOk;
}

int dispatch(const Args &a)
{
	if (a.command == "check")
		return run_check(a);
	std::shared_ptr<grpc::Channel> ch =
		grpc::CreateChannel("unix:" + a.socket, grpc::InsecureChannelCredentials());
	std::unique_ptr<pb::Heapd::Stub> stub = pb::Heapd::NewStub(ch);
	const std::string &c = a.command;
	if (c == "status")
		return run<pb::StatusRequest, pb::StatusResponse>(a, stub.get(), "Status",
			&pb::Heapd::Stub::Status, heapctl::print_status);
	if (c == "classes")
		return run<pb::ListClassesRequest, pb::ListClassesResponse>(a, stub.get(),
			"ListClasses", &pb::Heapd::Stub::ListClasses, heapctl::print_classes);
	if (c == "roots")
		return run<pb::ListRootsRequest, pb::ListRootsResponse>(a, stub.get(), "ListRoots",
			&pb::Heapd::Stub::ListRoots, heapctl::print_roots);
	if (c == "stats")
		return run<pb::StatsRequest, pb::StatsResponse>(a, stub.get(), "Stats",
			&pb::Heapd::Stub::Stats, heapctl::print_stats);
	if (c == "health")
		return run_health(a, ch.get());
	if (c == "gc")
		return run_gc(a, stub.get());
	if (c == "grow")
		return run_grow(a, stub.get());
	if (c == "metrics")
		return run_metrics(a, stub.get());
	return usage_error("unknown command '%s'", c.c_str());
}

} /* namespace */

int main(int argc, char **argv)
{
	Args a;
	int rc = parse_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	return dispatch(a);
}
