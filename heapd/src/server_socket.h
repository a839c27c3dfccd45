/*
 * server_socket.h -- heapd's listening UNIX socket and its accept thread.
 *
 * heapd accepts connections itself (rather than letting gRPC listen) so
 * that it can read each peer's credentials (SO_PEERCRED) before gRPC sees
 * a byte: connections from other users are refused, and the Attach
 * handler checks Hello.pid against the connecting process's pid.
 */
#ifndef HEAPD_SERVER_SOCKET_H
#define HEAPD_SERVER_SOCKET_H

#include <sys/socket.h>
#include <sys/types.h>

#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

namespace grpc {
class Server;
}

namespace heapd {

/* Credentials of one accepted connection. */
struct PeerCred {
	pid_t pid;
	uid_t uid;
	gid_t gid;
};

/* Peer credentials by the peer string gRPC reports for a channel made
 * from an accepted fd (ServerContext::peer(), "fd:<n>"). A reused fd
 * number simply replaces the entry of the closed connection. */
class PeerTable {
public:
	static std::string key(int fd);
	void put(int fd, const PeerCred &c);
	bool get(const std::string &peer, PeerCred *out);

private:
	std::mutex mu_;
	std::unordered_map<std::string, PeerCred> map_;
};

/* Bind path as heapd's socket: create the parent directory if missing
 * (0700), refuse a path another heapd is serving, replace a stale socket
 * of a dead one, bind, chmod 0600, listen. Shared with group gid (not
 * HD_NO_GROUP): new folders 0750 and the socket 0660, both of that group.
 * Returns 0, or -1 with err set (one line). */
struct OwnedSocket {
	int fd = -1;		/* listening */
	dev_t dev = 0;		/* identity of the socket file bound */
	ino_t ino = 0;
};
int socket_own(const char *path, gid_t gid, OwnedSocket *out, char *err, size_t errlen);

/* Close the listening fd and remove path if it still is the file heapd
 * bound (same inode), so a newer heapd's socket is never removed. */
void socket_release(const char *path, OwnedSocket *s);

/* The accept thread: accepts, checks and logs peers, records their
 * credentials and hands each connection to server. Peers allowed:
 * heapd's own user, root, and members of group gid (unless HD_NO_GROUP). */
class Acceptor {
public:
	Acceptor(int listen_fd, grpc::Server *server, PeerTable *peers, gid_t gid);
	~Acceptor();
	/* Start the thread. false with err set if it could not. */
	bool start(char *err, size_t errlen);
	/* Stop and join the thread; no connection is accepted afterwards. */
	void stop();

private:
	void run();
	void accept_one();
	bool peer_allowed(int fd, const struct ucred &uc);

	int lfd_;
	int wake_[2] = {-1, -1};	/* stop() writes to wake_[1] */
	grpc::Server *server_;
	PeerTable *peers_;
	gid_t gid_;
	std::thread thread_;
};

} /* namespace heapd */

#endif /* HEAPD_SERVER_SOCKET_H */
