/*
 * server_socket.cc -- owning heapd's UNIX socket and accepting on it
 * (see server_socket.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include <grpcpp/server.h>
#include <grpcpp/server_posix.h>

#include "heapd.h"
#include "server_socket.h"

namespace heapd {

std::string PeerTable::key(int fd)
{
	return "fd:" + std::to_string(fd);
}

void PeerTable::put(int fd, const PeerCred &c)
{
	std::lock_guard<std::mutex> g(mu_);
	map_[key(fd)] = c;
}

bool PeerTable::get(const std::string &peer, PeerCred *out)
{
	std::lock_guard<std::mutex> g(mu_);
	auto it = map_.find(peer);
	if (it == map_.end())
		return false;
	*out = it->second;
	return true;
}

namespace {

bool fill_addr(const char *path, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return false;
	strcpy(sa->sun_path, path);
	return true;
}

/* mkdir -p of path's parent; directories created here get mode 0700
 * because the socket is private to its user, or 0750 and group gid when
 * it is shared with that group. */
int make_parent(const char *path, gid_t gid, char *err, size_t errlen)
{
	std::string dir(path);
	size_t slash = dir.rfind('/');
	if (slash == std::string::npos || slash == 0)
		return 0;
	dir.resize(slash);
	for (size_t i = 1; i <= dir.size(); i++) {
		if (i < dir.size() && dir[i] != '/')
			continue;
		std::string part = dir.substr(0, i);
		if (mkdir(part.c_str(), 0700) == 0) {
			if (gid != HD_NO_GROUP &&
			    hd_share_path(part.c_str(), gid, 0750, err, errlen) != 0)
				return -1;
			continue;
		}
		if (errno == EEXIST)
			continue;
		snprintf(err, errlen, "cannot create socket directory %s: %s", part.c_str(),
			 strerror(errno));
		return -1;
	}
	return 0;
}

/* Decide about an existing file at path: 0 if it was a stale socket and
 * is gone now (or nothing is there), -1 with err set if heapd must not
 * take the path. */
int clear_stale(const char *path, const struct sockaddr_un *sa, char *err, size_t errlen)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return 0;
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "%s exists and is not a socket; not replacing it", path);
		return -1;
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket(): %s", strerror(errno));
		return -1;
	}
	int rc = connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
	int e = errno;
	close(fd);
	if (rc == 0) {
		snprintf(err, errlen, "another heapd is serving %s", path);
		return -1;
	}
	if (e != ECONNREFUSED && e != ENOENT) {
		snprintf(err, errlen, "cannot check existing socket %s: %s", path, strerror(e));
		return -1;
	}
	if (unlink(path) != 0 && errno != ENOENT) {
		snprintf(err, errlen, "cannot remove stale socket %s: %s", path, strerror(errno));
		return -1;
	}
	hd_log("info", "stale_socket", "path=%s action=removed", path);
	return 0;
}

int bind_listen(const char *path, const struct sockaddr_un *sa, gid_t gid, char *err,
		size_t errlen)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket(): %s", strerror(errno));
		return -1;
	}
	/* Nobody else may connect even between bind and chmod. This runs
	 * before heapd starts any thread, so changing the umask is safe. */
	mode_t old = umask(0177);
	int rc = bind(fd, (const struct sockaddr *)sa, sizeof(*sa));
	int e = errno;
	umask(old);
	if (rc != 0) {
		snprintf(err, errlen, "cannot bind %s: %s", path, strerror(e));
		close(fd);
		return -1;
	}
	int shared = gid != HD_NO_GROUP;
	if (shared ? hd_share_path(path, gid, 0660, err, errlen) != 0 : chmod(path, 0600) != 0) {
		if (!shared)
			snprintf(err, errlen, "cannot set mode 0600 on %s: %s", path,
				 strerror(errno));
		unlink(path);
		close(fd);
		return -1;
	}
	if (listen(fd, 128) != 0) {
		snprintf(err, errlen, "cannot listen on %s: %s", path, strerror(errno));
		unlink(path);
		close(fd);
		return -1;
	}
	return fd;
}

} /* namespace */

int socket_own(const char *path, gid_t gid, OwnedSocket *out, char *err, size_t errlen)
{
	struct sockaddr_un sa;
	if (!fill_addr(path, &sa)) {
		snprintf(err, errlen, "socket path too long (at most %zu bytes): %s",
			 sizeof(sa.sun_path) - 1, path);
		return -1;
	}
	if (make_parent(path, gid, err, errlen) != 0 || clear_stale(path, &sa, err, errlen) != 0)
		return -1;
	int fd = bind_listen(path, &sa, gid, err, errlen);
	if (fd < 0)
		return -1;
	struct stat st;
	if (stat(path, &st) != 0) {
		snprintf(err, errlen, "socket %s vanished after bind: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	out->fd = fd;
	out->dev = st.st_dev;
	out->ino = st.st_ino;
	return 0;
}

void socket_release(const char *path, OwnedSocket *s)
{
	if (s->fd < 0)
		return;
	close(s->fd);
	s->fd = -1;
	struct stat st;
	if (lstat(path, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino)
		unlink(path);
}

Acceptor::Acceptor(int listen_fd, grpc::Server *server, PeerTable *peers, gid_t gid)
	: lfd_(listen_fd), server_(server), peers_(peers), gid_(gid)
{
}

Acceptor::~Acceptor()
{
	stop();
}

bool Acceptor::start(char *err, size_t errlen)
{
	if (pipe2(wake_, O_CLOEXEC) != 0) {
		snprintf(err, errlen, "pipe(): %s", strerror(errno));
		return false;
	}
	try {
		thread_ = std::thread([this] { run(); });
	} catch (const std::exception &ex) {
		snprintf(err, errlen, "cannot start the accept thread: %s", ex.what());
		return false;
	}
	return true;
}

void Acceptor::stop()
{
	if (thread_.joinable()) {
		char b = 1;
		ssize_t n = write(wake_[1], &b, 1);
		(void)n;
		thread_.join();
	}
	for (int &fd : wake_) {
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
}

void Acceptor::run()
{
	for (;;) {
		struct pollfd p[2] = {{lfd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			hd_log("error", "accept", "poll=\"%s\"", strerror(errno));
			return;
		}
		if (p[1].revents)
			return;
		if (p[0].revents)
			accept_one();
	}
}

/* The socket's mode already keeps other users out; this check holds even
 * for a connection handed on to another process. */
bool Acceptor::peer_allowed(int fd, const struct ucred &uc)
{
	if (uc.uid == geteuid() || uc.uid == 0)
		return true;
	if (gid_ == HD_NO_GROUP)
		return false;
	if (uc.gid == gid_)
		return true;
	/* Supplementary groups as they were at connect(); retried once
	 * with the size the kernel asks for. */
	std::vector<gid_t> groups(64);
	for (int tries = 0; tries < 2; tries++) {
		socklen_t len = (socklen_t)(groups.size() * sizeof(gid_t));
		if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &len) == 0) {
			groups.resize(len / sizeof(gid_t));
			return std::find(groups.begin(), groups.end(), gid_) != groups.end();
		}
		if (errno != ERANGE)
			break;
		groups.resize(len / sizeof(gid_t) + 1);
	}
	hd_log("warn", "connect", "pid=%d reason=\"cannot read the peer's groups: %s\"",
	       (int)uc.pid, strerror(errno));
	return false;
}

void Acceptor::accept_one()
{
	int fd = accept4(lfd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0) {
		if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED) {
			hd_log("warn", "accept", "error=\"%s\"", strerror(errno));
			/* EMFILE and the like: don't spin on a full fd table. */
			usleep(100 * 1000);
		}
		return;
	}
	struct ucred uc;
	socklen_t len = sizeof(uc);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) != 0) {
		hd_log("warn", "connect", "refused=1 reason=\"no peer credentials: %s\"",
		       strerror(errno));
		close(fd);
		return;
	}
	hd_log("info", "connect", "pid=%d uid=%d gid=%d", (int)uc.pid, (int)uc.uid, (int)uc.gid);
	if (!peer_allowed(fd, uc)) {
		if (gid_ == HD_NO_GROUP)
			hd_log("warn", "connect", "refused=1 pid=%d uid=%d reason=\"uid is "
			       "neither heapd's (%d) nor root\"", (int)uc.pid, (int)uc.uid,
			       (int)geteuid());
		else
			hd_log("warn", "connect", "refused=1 pid=%d uid=%d reason=\"uid is "
			       "neither heapd's (%d) nor root, and not in group %d\"",
			       (int)uc.pid, (int)uc.uid, (int)geteuid(), (int)gid_);
		close(fd);
		return;
	}
	peers_->put(fd, PeerCred{uc.pid, uc.uid, uc.gid});
	/* gRPC owns fd from here on and closes it with the connection. */
	grpc::AddInsecureChannelFromFd(server_, fd);
}

} /* namespace heapd */
