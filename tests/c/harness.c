/*
 * harness.c -- test harness: private heapd instances, child processes,
 * counting assertions. See harness.h for the cleanup contract.
 *
 * Every pid this file starts goes into a small registry; the atexit and
 * fatal-signal handlers kill exactly those pids and remove the temporary
 * directories recorded next to them.
 */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef TH_BIN_DIR
#define TH_BIN_DIR "."
#endif
#ifndef HEAPD_BIN
#define HEAPD_BIN TH_BIN_DIR "/heapd"
#endif
#ifndef HEAPCTL_BIN
#define HEAPCTL_BIN TH_BIN_DIR "/heapctl"
#endif

extern char **environ;

int th_passed, th_failed;

/* ---- registry of what we must clean up ---- */

#define TH_MAX_PROCS 64
#define TH_MAX_DIRS 16

static volatile pid_t reg_pids[TH_MAX_PROCS];
static char reg_dirs[TH_MAX_DIRS][512];
static char last_args[TH_MAX_DIRS][512];	/* extra_args per dir, for restart */
static int handlers_installed;

static void reg_pid_add(pid_t pid)
{
	for (int i = 0; i < TH_MAX_PROCS; i++)
		if (reg_pids[i] == 0) {
			reg_pids[i] = pid;
			return;
		}
	fprintf(stderr, "harness: more than %d live children; %d not tracked\n",
		TH_MAX_PROCS, (int)pid);
}

static void reg_pid_del(pid_t pid)
{
	for (int i = 0; i < TH_MAX_PROCS; i++)
		if (reg_pids[i] == pid)
			reg_pids[i] = 0;
}

static int reg_dir_slot(const char *dir, int create)
{
	int free_slot = -1;

	for (int i = 0; i < TH_MAX_DIRS; i++) {
		if (reg_dirs[i][0] && strcmp(reg_dirs[i], dir) == 0)
			return i;
		if (!reg_dirs[i][0] && free_slot < 0)
			free_slot = i;
	}
	if (!create || free_slot < 0)
		return -1;
	snprintf(reg_dirs[free_slot], sizeof(reg_dirs[free_slot]), "%s", dir);
	last_args[free_slot][0] = '\0';
	return free_slot;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

static void rm_tree(const char *dir)
{
	if (dir[0])
		nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Kill every recorded child, reap them, remove recorded temp dirs. Only
 * pids we started: never by name. */
static void cleanup_all(void)
{
	for (int i = 0; i < TH_MAX_PROCS; i++) {
		pid_t p = reg_pids[i];
		if (p > 0) {
			kill(p, SIGKILL);
			waitpid(p, NULL, 0);
			reg_pids[i] = 0;
		}
	}
	for (int i = 0; i < TH_MAX_DIRS; i++)
		if (reg_dirs[i][0]) {
			rm_tree(reg_dirs[i]);
			reg_dirs[i][0] = '\0';
		}
}

static void on_fatal(int sig)
{
	cleanup_all();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install_handlers(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGABRT, SIGSEGV,
				    SIGBUS, SIGFPE, SIGILL };

	if (handlers_installed)
		return;
	handlers_installed = 1;
	atexit(cleanup_all);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], on_fatal);
	/* A child closing a pipe early must not kill the test. */
	signal(SIGPIPE, SIG_IGN);
}

/* ---- small utilities ---- */

uint64_t th_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void th_sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000u, (long)(ms % 1000u) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

int th_signal_file(const char *dir, const char *name, const char *text)
{
	char tmp[1024], path[1024];
	int fd, ok;

	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	ok = !text || write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	if (!ok)
		return -1;
	return rename(tmp, path);
}

int th_wait_file(const char *dir, const char *name, int timeout_ms)
{
	char path[1024];
	uint64_t end = th_now_ms() + (uint64_t)timeout_ms;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	while (access(path, F_OK) != 0) {
		if (th_now_ms() >= end)
			return -1;
		th_sleep_ms(5);
	}
	return 0;
}

const char *th_bin(const char *name)
{
	static char bufs[8][1024];
	static unsigned next;
	char *b = bufs[next++ % 8];
	const char *dir = getenv("UH_TEST_BIN_DIR");

	if (strcmp(name, "heapd") == 0)
		snprintf(b, 1024, "%s", HEAPD_BIN);
	else if (strcmp(name, "heapctl") == 0)
		snprintf(b, 1024, "%s", HEAPCTL_BIN);
	else
		snprintf(b, 1024, "%s/%s", dir ? dir : TH_BIN_DIR, name);
	return b;
}

int th_find_u64(const char *text, const char *key, uint64_t *v)
{
	size_t kl = strlen(key);

	for (const char *p = strstr(text, key); p; p = strstr(p + 1, key)) {
		const char *q = p + kl;
		/* whole key only: not a suffix/prefix of another word */
		if (p > text && (p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z')))
			continue;
		if (*q == '"')
			q++;
		if (*q != ':' && *q != '=' && *q != ' ' && *q != '\t')
			continue;
		q++;
		while (*q == ' ' || *q == '\t' || *q == '"' || *q == ':' || *q == '=')
			q++;
		if (*q < '0' || *q > '9')
			continue;
		*v = strtoull(q, NULL, 10);
		return 0;
	}
	return -1;
}

uint64_t th_status_u64(const struct th_heapd *d, const char *key)
{
	static char out[1 << 16];
	uint64_t v = UINT64_MAX;

	if (th_heapctl(d, "--json status", out, sizeof(out)) != 0 || th_find_u64(out, key, &v) != 0) {
		th_fail(__FILE__, __LINE__, "heapctl status: no %s in:\n%s", key, out);
		return UINT64_MAX;
	}
	th_passed++;
	return v;
}

void th_fail(const char *file, int line, const char *fmt, ...)
{
	const char *base = strrchr(file, '/');
	va_list ap;

	th_failed++;
	fprintf(stderr, "FAIL %s:%d: ", base ? base + 1 : file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

char *th_read_file(const char *path, size_t *len)
{
	struct stat st;
	int fd = open(path, O_RDONLY);
	char *buf = NULL;
	size_t got = 0;
	ssize_t n;

	*len = 0;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && (buf = malloc((size_t)st.st_size + 1)) != NULL) {
		while (got < (size_t)st.st_size &&	/* bound: the file's size */
		       (n = read(fd, buf + got, (size_t)st.st_size - got)) > 0)
			got += (size_t)n;
		if (got < (size_t)st.st_size) {
			free(buf);
			buf = NULL;
		} else {
			buf[got] = '\0';
			*len = got;
		}
	}
	close(fd);
	return buf;
}

int th_summary(const char *suite)
{
	fflush(stderr);
	printf("%s: %d passed, %d failed\n", suite, th_passed, th_failed);
	fflush(stdout);
	return th_failed ? 1 : 0;
}

/* ---- processes ---- */

static int status_code(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return -1;
}

/* Apply "K=V" strings to this (child) process's environment. */
static void apply_env(char *const env[])
{
	for (size_t i = 0; env && env[i]; i++) {
		char kv[4096];
		char *eq;

		snprintf(kv, sizeof(kv), "%s", env[i]);
		eq = strchr(kv, '=');
		if (!eq)
			continue;
		*eq = '\0';
		setenv(kv, eq + 1, 1);
	}
}

pid_t th_spawn(char *const argv[], char *const env[])
{
	pid_t pid;

	install_handlers();
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "harness: fork: %s\n", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		apply_env(env);
		execv(argv[0], argv);
		fprintf(stderr, "harness: exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	reg_pid_add(pid);
	return pid;
}

int th_wait_exit(pid_t pid)
{
	int st;

	if (pid <= 0)	/* never waitpid(-1): that would reap any child */
		return -1;
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "harness: waitpid %d: %s\n", (int)pid,
				strerror(errno));
			reg_pid_del(pid);
			return -1;
		}
	}
	reg_pid_del(pid);
	return status_code(st);
}

int th_wait_exit_timeout(pid_t pid, int timeout_ms)
{
	uint64_t end = th_now_ms() + (uint64_t)timeout_ms;
	int st;

	if (pid <= 0)
		return -1;
	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid) {
			reg_pid_del(pid);
			return status_code(st);
		}
		if (r < 0 && errno != EINTR) {
			reg_pid_del(pid);
			return -1;
		}
		if (th_now_ms() >= end)
			return -2;
		th_sleep_ms(5);
	}
}

int th_kill(pid_t pid)
{
	if (pid <= 0)
		return -1;
	kill(pid, SIGKILL);
	return th_wait_exit(pid);
}

int th_run_capture(char *const argv[], char *out, size_t outlen)
{
	int fds[2];
	size_t used = 0;
	pid_t pid;

	install_handlers();
	if (pipe(fds) != 0)
		return -1;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[0]);
		close(fds[1]);
		execv(argv[0], argv);
		fprintf(stderr, "harness: exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	reg_pid_add(pid);
	close(fds[1]);
	/* Drain everything so the child never blocks on a full pipe. */
	for (;;) {
		char buf[4096];
		ssize_t n = read(fds[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n && out && used + 1 < outlen; i++)
			out[used++] = buf[i];
	}
	close(fds[0]);
	if (out && outlen)
		out[used] = '\0';
	return th_wait_exit(pid);
}

/* Split a space-separated string into argv[*n...]; words point into buf. */
static void split_args(char *buf, char **argv, int *n, int max)
{
	char *save = NULL;

	for (char *w = strtok_r(buf, " \t", &save); w && *n < max;
	     w = strtok_r(NULL, " \t", &save))
		argv[(*n)++] = w;
}

int th_heapctl(const struct th_heapd *d, const char *args, char *out, size_t outlen)
{
	char buf[1024];
	char *argv[40];
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", args ? args : "");
	argv[n++] = (char *)th_bin("heapctl");
	argv[n++] = "--socket";
	argv[n++] = (char *)d->sock;
	split_args(buf, argv, &n, 38);
	argv[n] = NULL;
	return th_run_capture(argv, out, outlen);
}

/* ---- heapd ---- */

static const char *temp_base(void)
{
	const char *t = getenv("TMPDIR");
	struct stat st;

	/* The socket path must fit sun_path (108 bytes): fall back to /tmp
	 * when $TMPDIR is too long for "<base>/uniheap-test-XXXXXX/heapd.sock". */
	if (t && *t && strlen(t) < 70)
		return t;
	if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) &&
	    access("/dev/shm", W_OK) == 0)
		return "/dev/shm";
	return "/tmp";
}

static int make_temp_dir(struct th_heapd *d)
{
	char tmpl[512];

	snprintf(tmpl, sizeof(tmpl), "%s/uniheap-test-XXXXXX", temp_base());
	if (!mkdtemp(tmpl)) {
		fprintf(stderr, "harness: mkdtemp %s: %s\n", tmpl, strerror(errno));
		return -1;
	}
	snprintf(d->dir, sizeof(d->dir), "%s", tmpl);
	return 0;
}

static void set_paths(struct th_heapd *d)
{
	snprintf(d->heap, sizeof(d->heap), "%s/heap.uh", d->dir);
	snprintf(d->sock, sizeof(d->sock), "%s/heapd.sock", d->dir);
	snprintf(d->log, sizeof(d->log), "%s/heapd.log", d->dir);
}

void th_heapd_log_tail(const struct th_heapd *d, size_t maxbytes)
{
	char buf[8192];
	int fd = open(d->log, O_RDONLY);
	off_t size;
	ssize_t n;

	if (fd < 0)
		return;
	if (maxbytes >= sizeof(buf))
		maxbytes = sizeof(buf) - 1;
	size = lseek(fd, 0, SEEK_END);
	lseek(fd, size > (off_t)maxbytes ? size - (off_t)maxbytes : 0, SEEK_SET);
	n = read(fd, buf, maxbytes);
	close(fd);
	if (n > 0) {
		buf[n] = '\0';
		fprintf(stderr, "---- tail of %s ----\n%s\n----\n", d->log, buf);
	}
}

/* 1 when something accepts connections on path. */
static int socket_ready(const char *path)
{
	struct sockaddr_un sa;
	int fd, ok;

	size_t len = strlen(path);

	if (len >= sizeof(sa.sun_path))
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, len);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	ok = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return ok;
}

/* Child side of th_heapd_start: redirect output, die with the parent. */
static void heapd_child(const struct th_heapd *d, char **argv)
{
	int fd = open(d->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
	}
	/* A test killed by SIGKILL (timeout) must not leave heapd running. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	execv(argv[0], argv);
	fprintf(stderr, "harness: exec %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* Options heapd accepts only with --create (each takes a value). */
static int creation_only(const char *opt)
{
	static const char *const opts[] = { "--size", "--max-size", "--durability", "--name",
					    "--log-size" };

	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		size_t n = strlen(opts[i]);
		if (strncmp(opt, opts[i], n) == 0 && (opt[n] == '\0' || opt[n] == '='))
			return opt[n] == '\0' ? 2 : 1;	/* words to skip */
	}
	return 0;
}

/* Build heapd's argv. create: add --create and the size/durability
 * defaults unless extra_args gives them, and a --max-size equal to the
 * size unless extra_args gives one: a test's heap keeps the size it asked
 * for (heapd's default lets a heap grow, FORMAT.md 1.1), so what fills it
 * fills it. Reopen: drop the creation-only
 * options of extra_args (heapd refuses them without --create), so that a
 * restart can reuse the arguments of the first start. */
static int heapd_argv(const struct th_heapd *d, int create, char *extra, char **argv, int max)
{
	char *words[48];
	int n = 0, nw = 0;
	int has_size = 0, has_dur = 0, has_max = 0;
	char *size = "64M";

	argv[n++] = (char *)th_bin("heapd");
	argv[n++] = "--heap";
	argv[n++] = (char *)d->heap;
	argv[n++] = "--socket";
	argv[n++] = (char *)d->sock;
	split_args(extra, words, &nw, 48);
	for (int i = 0; i < nw && n < max - 9; i++) {
		int skip = creation_only(words[i]);
		if (strncmp(words[i], "--size", 6) == 0) {
			has_size = 1;
			if (words[i][6] == '=')
				size = words[i] + 7;
			else if (i + 1 < nw)
				size = words[i + 1];
		}
		if (strncmp(words[i], "--max-size", 10) == 0)
			has_max = 1;
		if (strncmp(words[i], "--durability", 12) == 0)
			has_dur = 1;
		if (skip && !create) {
			i += skip - 1;
			continue;
		}
		argv[n++] = words[i];
	}
	if (create) {
		argv[n++] = "--create";
		if (!has_size) {
			argv[n++] = "--size";
			argv[n++] = size;
		}
		if (!has_max) {
			argv[n++] = "--max-size";
			argv[n++] = size;
		}
		if (!has_dur) {
			argv[n++] = "--durability";
			argv[n++] = "memory";
		}
	}
	argv[n] = NULL;
	return n;
}

/* heapd serves before its recovery's GC when that may be an online cycle
 * (FORMAT.md 9.4); what tests read of the recovery (live and freed
 * objects) is known once that cycle ends: wait for it. Not when the
 * collector is told to stop in a phase (UNIHEAP_GC_STOP_AT): it never ends. */
static int recovery_done(const struct th_heapd *d, uint64_t deadline)
{
	static char out[1 << 16];

	if (getenv("UNIHEAP_GC_STOP_AT") || d->no_recovery_wait)
		return 0;
	while (th_now_ms() < deadline) {
		if (th_heapctl(d, "status --json", out, sizeof(out)) != 0) {
			fprintf(stderr, "harness: heapctl status failed:\n%s\n", out);
			return -1;
		}
		if (!strstr(out, "\"gc_pending\":true"))
			return 0;
		th_sleep_ms(5);
	}
	fprintf(stderr, "harness: heapd's recovery GC cycle did not end within 50 s\n");
	return -1;
}

int th_heapd_start(struct th_heapd *d, const char *extra_args)
{
	char extra[512];
	char *argv[64];
	int create, slot;
	uint64_t deadline;

	install_handlers();
	if (d->pid > 0) {
		fprintf(stderr, "harness: heapd already running (pid %d)\n", (int)d->pid);
		return -1;
	}
	if (!d->dir[0] && make_temp_dir(d) != 0)
		return -1;
	if (mkdir(d->dir, 0700) != 0 && errno != EEXIST) {
		fprintf(stderr, "harness: mkdir %s: %s\n", d->dir, strerror(errno));
		return -1;
	}
	set_paths(d);
	if (strlen(d->sock) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		fprintf(stderr, "harness: socket path too long for AF_UNIX: %s\n", d->sock);
		return -1;
	}
	slot = reg_dir_slot(d->dir, 1);
	if (slot >= 0)
		snprintf(last_args[slot], sizeof(last_args[slot]), "%s",
			 extra_args ? extra_args : "");
	snprintf(extra, sizeof(extra), "%s", extra_args ? extra_args : "");
	create = access(d->heap, F_OK) != 0;
	heapd_argv(d, create, extra, argv, 64);

	fflush(stdout);
	fflush(stderr);
	d->pid = fork();
	if (d->pid < 0) {
		d->pid = 0;
		fprintf(stderr, "harness: fork: %s\n", strerror(errno));
		return -1;
	}
	if (d->pid == 0)
		heapd_child(d, argv);
	reg_pid_add(d->pid);

	/* Ready when the socket accepts; failed if heapd exits first. */
	deadline = th_now_ms() + 10000;
	while (th_now_ms() < deadline) {
		int rc = th_wait_exit_timeout(d->pid, 0);
		if (rc != -2) {
			fprintf(stderr, "harness: heapd exited with %d before serving\n", rc);
			d->pid = 0;
			th_heapd_log_tail(d, 2000);
			return -1;
		}
		if (socket_ready(d->sock)) {
			d->serving_ms = th_now_ms();
			return recovery_done(d, deadline + 50000);
		}
		th_sleep_ms(1);
	}
	fprintf(stderr, "harness: heapd did not accept on %s within 10 s\n", d->sock);
	th_heapd_kill(d);
	th_heapd_log_tail(d, 2000);
	return -1;
}

void th_heapd_stop(struct th_heapd *d)
{
	int rc;

	if (d->pid <= 0)
		return;
	kill(d->pid, SIGTERM);
	rc = th_wait_exit_timeout(d->pid, 5000);
	if (rc == -2) {
		fprintf(stderr, "harness: heapd %d ignored SIGTERM for 5 s; SIGKILL\n",
			(int)d->pid);
		th_kill(d->pid);
	}
	d->pid = 0;
}

void th_heapd_kill(struct th_heapd *d)
{
	if (d->pid <= 0)
		return;
	th_kill(d->pid);
	d->pid = 0;
}

int th_heapd_restart(struct th_heapd *d)
{
	int slot = reg_dir_slot(d->dir, 0);
	char args[512];

	snprintf(args, sizeof(args), "%s", slot >= 0 ? last_args[slot] : "");
	th_heapd_stop(d);
	return th_heapd_start(d, args[0] ? args : NULL);
}

void th_heapd_cleanup(struct th_heapd *d)
{
	int slot;

	th_heapd_stop(d);
	if (!d->dir[0])
		return;
	rm_tree(d->dir);
	slot = reg_dir_slot(d->dir, 0);
	if (slot >= 0)
		reg_dirs[slot][0] = '\0';
	d->dir[0] = '\0';
}

#ifndef TH_NO_UNIHEAP
int th_connect(const struct th_heapd *d, uint32_t flags, uh_heap **out)
{
	int rc = uh_connect(d->sock, flags, out);

	if (rc != 0)
		fprintf(stderr, "harness: uh_connect(%s): %s: %s\n", d->sock,
			uh_strerror(rc), uh_errmsg());
	return rc;
}
#endif /* TH_NO_UNIHEAP */

void th_record_append(int fd, const char *text)
{
	char rec[TH_RECORD_LEN];
	size_t n = strlen(text);

	if (n >= TH_RECORD_LEN) {
		fprintf(stderr, "th_record_append: record of %zu bytes is too long\n", n);
		exit(1);
	}
	memcpy(rec, text, n);
	memset(rec + n, ' ', TH_RECORD_LEN - 1 - n);
	rec[TH_RECORD_LEN - 1] = '\n';
	if (write(fd, rec, TH_RECORD_LEN) != TH_RECORD_LEN) {
		fprintf(stderr, "th_record_append: %s\n", strerror(errno));
		exit(1);
	}
}

long th_count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	long n = 0;
	int c;

	if (!f)
		return 0;
	while ((c = getc(f)) != EOF)	/* bound: the file's bytes */
		n += c == '\n';
	fclose(f);
	return n;
}

int th_copy_file(const char *from, const char *to)
{
	char buf[1 << 16];
	ssize_t n = 0;
	int in = open(from, O_RDONLY);
	int out = in < 0 ? -1 : open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (out < 0) {
		if (in >= 0)
			close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			n = -1;
			break;
		}
	close(in);
	close(out);
	return n < 0 ? -1 : 0;
}
