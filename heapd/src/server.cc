/*
 * server.cc -- hd_serve(): heapd's gRPC server on its own UNIX socket.
 *
 * Order of start-up, and why:
 *  1. Block SIGTERM/SIGINT/SIGPIPE before any thread exists, so every
 *     thread (gRPC's included) inherits the mask and the signals reach
 *     only the sigwait() below.
 *  2. Own the socket (stale one replaced, live one refused), mode 0600,
 *     or 0660 of the group heapd is shared with (heapd --group).
 *  3. Build the gRPC server with no listening port of its own: the accept
 *     thread hands it each connection after checking SO_PEERCRED. The
 *     standard grpc.health.v1 service and server reflection are on, so
 *     stock gRPC tools list and call heapd's services without the .proto.
 *  4. With --metrics, listen there and start the metrics thread
 *     (server_metrics.h); a bad address fails the start.
 *  5. Only then tell a service manager READY=1 ($NOTIFY_SOCKET): a unit
 *     ordered after heapd finds it accepting calls.
 * Shutdown (SIGTERM/SIGINT): say STOPPING=1, stop accepting and remove the
 * socket, stop the metrics thread, mark
 * the service as stopping (so sessions cut by the shutdown are not
 * reaped: their clients live on and the next heapd recovers them), then
 * Server::Shutdown with a 250 ms deadline.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <chrono>
#include <exception>
#include <memory>
#include <string>

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include "heapd.h"
#include "server_metrics.h"
#include "server_service.h"
#include "server_socket.h"

namespace {

/* Grace for unary calls in flight at shutdown (they take micro- to
 * milliseconds). gRPC waits out the whole deadline while any client
 * process still holds an idle connection, so it is kept short. */
constexpr int kShutdownMs = 250;

constexpr long kReapPollNs = 100 * 1000 * 1000;

/* Wait for SIGTERM or SIGINT (blocked in every thread); returns it. While
 * waiting, reap every 100 ms the sessions a previous heapd left whose
 * process has exited: nobody holds a stream of theirs, so no stream end
 * will ever announce their death, yet their locks must not outlive them. */
int wait_stop_signal(struct hd *hd)
{
	sigset_t stop;
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	const struct timespec poll = { 0, kReapPollNs };
	for (;;) {
		int sig = sigtimedwait(&stop, nullptr, &poll);
		if (sig > 0)
			return sig;
		hd_reap_inherited(hd);
	}
}

void block_signals()
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void set_serving(grpc::Server *server, bool serving)
{
	grpc::HealthCheckServiceInterface *h = server->GetHealthCheckService();
	if (!h)
		return;
	h->SetServingStatus(serving);
	h->SetServingStatus(uniheap::v1::Heapd::service_full_name(), serving);
}

void notify_ready(struct hd *hd, const char *path)
{
	std::string state = std::string("READY=1\nSTATUS=serving ") + hd_heap_path(hd) +
			    " on " + path;
	hd_notify(state.c_str());
}

int serve(struct hd *hd, const char *path, gid_t gid, const char *metrics_at, char *err,
	  size_t errlen)
{
	/* Stays blocked after return: a second SIGTERM during hd_close()
	 * must not kill heapd half way. */
	block_signals();

	heapd::OwnedSocket sock;
	if (heapd::socket_own(path, gid, &sock, err, errlen) != 0)
		return UH_EIO;

	heapd::PeerTable peers;
	heapd::Service service(hd, &peers);
	grpc::EnableDefaultHealthCheckService(true);
	grpc::reflection::InitProtoReflectionServerBuilderPlugin();
	grpc::ServerBuilder builder;
	builder.RegisterService(&service);
	std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
	if (!server) {
		heapd::socket_release(path, &sock);
		snprintf(err, errlen, "cannot start the gRPC server");
		return UH_EINTERNAL;
	}
	set_serving(server.get(), true);

	heapd::Acceptor acceptor(sock.fd, server.get(), &peers, gid);
	heapd::MetricsServer metrics(&service);
	int rc = 0;
	if (!acceptor.start(err, errlen))
		rc = UH_EINTERNAL;
	else if (metrics_at && !metrics.start(metrics_at, err, errlen))
		rc = UH_EIO;
	if (rc) {
		acceptor.stop();
		server->Shutdown();
		heapd::socket_release(path, &sock);
		return rc;
	}
	hd_log("info", "listening", "socket=%s pid=%d", path, (int)getpid());
	notify_ready(hd, path);
	hd_gc_serving(hd);

	int sig = wait_stop_signal(hd);
	hd_log("info", "shutdown", "signal=%s", sig == SIGTERM ? "SIGTERM" : "SIGINT");
	hd_notify("STOPPING=1");
	service.begin_shutdown();
	set_serving(server.get(), false);
	acceptor.stop();
	heapd::socket_release(path, &sock);
	metrics.stop();
	server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(kShutdownMs));
	server->Wait();
	hd_log("info", "stopped", "socket=%s", path);
	return 0;
}

} /* namespace */

extern "C" int hd_serve_metrics(struct hd *hd, const char *socket_path, gid_t gid,
				const char *metrics, char *err, size_t errlen)
{
	if (!hd || !socket_path || !*socket_path) {
		snprintf(err, errlen, "hd_serve: no heap or no socket path");
		return UH_EINVAL;
	}
	try {
		return serve(hd, socket_path, gid, metrics, err, errlen);
	} catch (const std::exception &ex) {
		snprintf(err, errlen, "hd_serve: %s", ex.what());
		return UH_EINTERNAL;
	}
}

extern "C" int hd_serve_shared(struct hd *hd, const char *socket_path, gid_t gid, char *err,
			       size_t errlen)
{
	return hd_serve_metrics(hd, socket_path, gid, nullptr, err, errlen);
}

extern "C" int hd_serve(struct hd *hd, const char *socket_path, char *err, size_t errlen)
{
	return hd_serve_shared(hd, socket_path, HD_NO_GROUP, err, errlen);
}
