/*
 * test_damaged_heap.c -- a damaged heap file never takes heapd, the heap
 * check or a client down.
 *
 * A populated heap (prog_damage_client --fill: records, strings, a large
 * bytes object, array, list, hash map, sorted map, roots) is the template.
 * Each case copies it, changes a few bytes at one random spot, and starts
 * heapd on the copy. Spots are weighted towards the metadata a reader
 * trusts: libpmemobj's pool header and descriptor, its first lanes, its
 * heap and zone headers and chunk headers, the run headers and bitmaps at
 * the start of the first chunks, then uniheap's header, class table,
 * class descriptors, root map and root table; a few anywhere in the file.
 * Changes: a bit flipped, a byte replaced, an aligned word zeroed, set to
 * all ones or to random bits (one to four of them).
 *
 * Every case must end one of two ways, within a bounded time:
 *   refused: heapd exits 1..127 (never a signal) with a message naming
 *            the file;
 *   served:  a client (prog_damage_client --use: uh_heap_check, reads,
 *            writes) ends with errors at worst, heapctl check (every 8th
 *            served case) exits 0, 1 or 2 (sound, problem, not mappable:
 *            never a signal), heapd is still running and stops cleanly on
 *            SIGTERM.
 * A signal, a hang or heapd dying while it serves fails the case; the
 * case number, seed, spot and change are printed to reproduce it.
 *
 * UH_DAMAGE_CASES=n (default 1000), UH_DAMAGE_SEED=s (default: from the
 * clock, printed), UH_DAMAGE_ONLY=i runs case i of the seed alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "format.h"
#include "harness.h"

#define START_MS 45000		/* heapd's own probe gives up after 30 s */
#define CLIENT_MS 30000
#define STOP_MS 10000

/* libpmemobj 1.12's pool descriptor, after the 4 KiB pool header and the
 * 1 KiB layout name: where the lanes and the heap start. */
#define PMO_LANES_OFF_AT 5120
#define PMO_NLANES_AT 5128
#define PMO_HEAP_OFF_AT 5136
#define PMO_LANE_SIZE 3072
#define PMO_CHUNK 262144
#define PMO_ZONE_HDR 64
#define PMO_HEAP_HDR 1024

static const char *SUITE = "test_damaged_heap";
static struct th_heapd d;
static char *tmpl;
static size_t tmpl_len;
static long uh_hdr_off;		/* of the template's uniheap header */
static char case_path[700], case_log[700];

struct region {
	const char *name;
	uint64_t off, len;
	int weight;
};
static struct region regions[16];
static int nregions, total_weight;

enum { REFUSED, SERVED_OK, SERVED_PROBLEM, N_OUT };
static long outcomes[N_OUT];
static long refusal_kinds[4];	/* probe crashed/hung, probe inconsistent, header, other */
static long served;

static uint64_t rng;

static uint64_t rnd(void)
{
	return th_xorshift64(&rng);
}

static uint64_t u64_at(uint64_t off)
{
	uint64_t v = 0;

	if (off + 8 <= tmpl_len)
		memcpy(&v, tmpl + off, 8);
	return v;
}

static void add_region(const char *name, uint64_t off, uint64_t len, int weight)
{
	if (off >= tmpl_len || len == 0 || nregions == 16)
		return;
	if (len > tmpl_len - off)
		len = tmpl_len - off;
	regions[nregions++] = (struct region){ name, off, len, weight };
	total_weight += weight;
}

/* The spots of the template worth damaging, with their weights. */
static int plan_regions(void)
{
	uint64_t lanes = u64_at(PMO_LANES_OFF_AT), heap = u64_at(PMO_HEAP_OFF_AT);
	long ho = uh_hdr_off = th_find_uh_header(tmpl, tmpl_len);

	if (ho < 0 || lanes == 0 || heap == 0) {
		th_fail(__FILE__, __LINE__, "template: pool layout not found");
		return -1;
	}
	const struct uh_hdr *h = (const void *)(tmpl + ho);
	uint64_t chunks = heap + PMO_HEAP_HDR + PMO_ZONE_HDR + 8ull * 65528;
	add_region("pool header", 0, 4096, 12);
	add_region("pool descriptor", 4096, 4096, 8);
	add_region("first lanes", lanes, 16 * PMO_LANE_SIZE, 10);
	add_region("any lane", lanes, u64_at(PMO_NLANES_AT) * PMO_LANE_SIZE, 4);
	add_region("heap and zone headers", heap, PMO_HEAP_HDR + PMO_ZONE_HDR, 8);
	add_region("chunk headers", heap + PMO_HEAP_HDR + PMO_ZONE_HDR, 8 * 96, 10);
	add_region("run headers and bitmaps", chunks, 0, 0);	/* placeholder, see spot() */
	regions[nregions - 1].len = 512;
	regions[nregions - 1].weight = 12;
	total_weight += 12;
	add_region("uniheap header", (uint64_t)ho, UH_HDR_SIZE, 10);
	add_region("class table", h->class_tab_off, 8ull * (h->class_count + 1), 6);
	add_region("class descriptors", u64_at(h->class_tab_off + 8), 0, 0);
	regions[nregions - 1].len = 1;	/* placeholder, see spot() */
	regions[nregions - 1].weight = 6;
	total_weight += 6;
	add_region("root map", h->rootmap_off, 64, 4);
	uint64_t table = u64_at(h->rootmap_off + 16);
	add_region("root table", table, 16 + 16 * 16, 5);
	add_region("anywhere", 0, tmpl_len, 5);
	return 0;
}

/* A random offset in region r; runs and descriptors are many small
 * spots, so one of them is picked first. */
static uint64_t spot(const struct region *r)
{
	const struct uh_hdr *h = (const void *)(tmpl + uh_hdr_off);

	if (!strcmp(r->name, "run headers and bitmaps")) {
		uint64_t nchunks = (tmpl_len - r->off) / PMO_CHUNK;
		uint64_t c = nchunks > 40 ? rnd() % 40 : rnd() % (nchunks ? nchunks : 1);
		return r->off + c * PMO_CHUNK + rnd() % r->len;
	}
	if (!strcmp(r->name, "class descriptors")) {
		uint32_t id = 1 + (uint32_t)(rnd() % h->class_count);
		uint64_t desc = u64_at(h->class_tab_off + 8ull * id);
		if (desc == 0 || desc >= tmpl_len - 512)
			desc = r->off;
		return desc + rnd() % (288 + 80 * 4);
	}
	return r->off + rnd() % r->len;
}

/* Damage img at one spot: 1..4 changes in a 64-byte window. *what
 * describes them for the failure message. */
static void damage(char *img, char *what, size_t n)
{
	uint64_t pick = rnd() % (uint64_t)total_weight;
	const struct region *r = regions;

	for (int i = 0; i < nregions; i++) {
		if (pick < (uint64_t)regions[i].weight) {
			r = &regions[i];
			break;
		}
		pick -= (uint64_t)regions[i].weight;
	}
	uint64_t at = spot(r);
	int changes = 1 + (int)(rnd() % 4);
	int len = snprintf(what, n, "%s at %llu:", r->name, (unsigned long long)at);
	for (int i = 0; i < changes; i++) {
		uint64_t o = at + (i ? rnd() % 64 : 0);
		if (o + 8 > tmpl_len)
			o = tmpl_len - 8;
		uint64_t w = o & ~7ull, v = rnd();
		switch (rnd() % 5) {
		case 0: img[o] ^= (char)(1u << (rnd() % 8)); len += snprintf(what + len, n - len, " bit@%llu", (unsigned long long)o); break;
		case 1: img[o] = (char)v; len += snprintf(what + len, n - len, " byte@%llu", (unsigned long long)o); break;
		case 2: memset(img + w, 0, 8); len += snprintf(what + len, n - len, " zero@%llu", (unsigned long long)w); break;
		case 3: memset(img + w, 0xff, 8); len += snprintf(what + len, n - len, " ones@%llu", (unsigned long long)w); break;
		default: memcpy(img + w, &v, 8); len += snprintf(what + len, n - len, " rand@%llu", (unsigned long long)w); break;
		}
		if ((size_t)len >= n)
			len = (int)n - 1;
	}
}

static int write_file(const char *path, const char *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int ok = fd >= 0 && write(fd, buf, len) == (ssize_t)len;

	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

static char *read_whole(const char *path, size_t *len)
{
	struct stat st;
	int fd = open(path, O_RDONLY);
	char *buf = NULL;

	if (fd >= 0 && fstat(fd, &st) == 0 && (buf = malloc((size_t)st.st_size + 1)) != NULL) {
		ssize_t n = read(fd, buf, (size_t)st.st_size);
		*len = n > 0 ? (size_t)n : 0;
		buf[*len] = '\0';
	}
	if (fd >= 0)
		close(fd);
	return buf;
}

static int socket_ready(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), ok;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	memcpy(sa.sun_path, path, strlen(path));
	ok = fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

/* th_spawn with stdout and stderr appended to case_log. */
static pid_t spawn_logged(char **argv)
{
	int log = open(case_log, O_WRONLY | O_CREAT | O_APPEND, 0600);
	int out = dup(1), err = dup(2);

	fflush(stdout);
	dup2(log, 1);
	dup2(log, 2);
	pid_t pid = th_spawn(argv, NULL);
	dup2(out, 1);
	dup2(err, 2);
	close(out);
	close(err);
	close(log);
	return pid;
}

/* Start heapd on the case file, its stderr into case_log. Returns its pid
 * once it serves; 0 when it exited (*rc = its status); -1 on a hang. */
static pid_t start_heapd(int *rc)
{
	char *argv[] = { (char *)th_bin("heapd"), "--heap", case_path, "--socket", d.sock, NULL };

	unlink(d.sock);
	unlink(case_log);
	pid_t pid = spawn_logged(argv);
	for (uint64_t end = th_now_ms() + START_MS; th_now_ms() < end;) {
		*rc = th_wait_exit_timeout(pid, 0);
		if (*rc != -2)
			return 0;
		if (socket_ready(d.sock))
			return pid;
		th_sleep_ms(2);
	}
	th_kill(pid);
	return -1;
}

static void count_refusal(const char *msg)
{
	if (strstr(msg, "libpmemobj crashed") || strstr(msg, "did not finish"))
		refusal_kinds[0]++;
	else if (strstr(msg, "consistency check"))
		refusal_kinds[1]++;
	else if (strstr(msg, "header"))
		refusal_kinds[2]++;
	else
		refusal_kinds[3]++;
}

/* A served heap: the check tool, a client, then a clean stop. */
static int serve_case(pid_t pid, const char *id)
{
	static char out[8192];
	char *use[] = { (char *)th_bin("prog_damage_client"), "--socket", d.sock, "--use", NULL };
	int ok = 1;

	/* The client checks the heap first (uh_heap_check, as uniheap-check
	 * does); heapctl check itself runs on every 8th served heap, to keep
	 * the run short. */
	int rc = 0;
	if (served++ % 8 == 0 && (rc = th_heapctl(&d, "check", out, sizeof(out))) > 2) {
		th_fail(__FILE__, __LINE__, "%s: heapctl check exit %d:\n%s", id, rc, out);
		ok = 0;
	}
	pid_t c = spawn_logged(use);
	int crc = th_wait_exit_timeout(c, CLIENT_MS);
	if (crc == -2) {
		th_kill(c);
		th_fail(__FILE__, __LINE__, "%s: client hung for %d ms", id, CLIENT_MS);
		ok = 0;
	} else if (crc < 0 || crc > 2) {
		th_fail(__FILE__, __LINE__, "%s: client exit %d", id, crc);
		ok = 0;
	}
	outcomes[rc == 0 && crc == 0 ? SERVED_OK : SERVED_PROBLEM]++;
	int hrc = th_wait_exit_timeout(pid, 0);
	if (hrc != -2) {
		size_t len = 0;
		char *log = read_whole(case_log, &len);
		th_fail(__FILE__, __LINE__, "%s: heapd died while serving (exit %d):\n%s", id, hrc,
			log ? log : "");
		free(log);
		return 0;
	}
	kill(pid, SIGTERM);
	rc = th_wait_exit_timeout(pid, STOP_MS);
	if (rc != 0) {
		if (rc == -2)
			th_kill(pid);
		th_fail(__FILE__, __LINE__, "%s: heapd stop: exit %d", id, rc);
		ok = 0;
	}
	return ok;
}

static void run_case(uint64_t seed, long i)
{
	char what[512], id[1300];
	size_t loglen = 0;
	int rc = 0;

	rng = seed * 0x9e3779b97f4a7c15ull + (uint64_t)i * 0xbf58476d1ce4e5b9ull + 1;
	for (int k = 0; k < 4; k++)
		rnd();
	char *img = malloc(tmpl_len);
	if (!img)
		return;
	memcpy(img, tmpl, tmpl_len);
	damage(img, what, sizeof(what));
	snprintf(id, sizeof(id), "case %ld (UH_DAMAGE_SEED=%llu UH_DAMAGE_ONLY=%ld; %s)", i,
		 (unsigned long long)seed, i, what);
	if (write_file(case_path, img, tmpl_len) != 0) {
		th_fail(__FILE__, __LINE__, "%s: write %s", id, case_path);
		free(img);
		return;
	}
	free(img);
	pid_t pid = start_heapd(&rc);
	char *log = read_whole(case_log, &loglen);
	if (pid < 0) {
		th_fail(__FILE__, __LINE__, "%s: heapd neither served nor exited in %d ms", id,
			START_MS);
	} else if (pid == 0 && (rc <= 0 || rc >= 128)) {
		th_fail(__FILE__, __LINE__, "%s: heapd exit %d (a signal?):\n%s", id, rc,
			log ? log : "");
	} else if (pid == 0 && (!log || !strstr(log, case_path))) {
		th_fail(__FILE__, __LINE__, "%s: refused without naming the file:\n%s", id,
			log ? log : "");
	} else if (pid == 0) {
		outcomes[REFUSED]++;
		count_refusal(log);
		th_passed++;
	} else if (serve_case(pid, id)) {
		th_passed++;
	}
	free(log);
}

static int make_template(void)
{
	static char out[8192];
	char *fill[] = { (char *)th_bin("prog_damage_client"), "--socket", NULL, "--fill", NULL };

	if (th_heapd_start(&d, "--size 32M") != 0)
		return -1;
	fill[2] = d.sock;
	int rc = th_run_capture(fill, out, sizeof(out));
	th_heapd_stop(&d);
	if (rc != 0) {
		fprintf(stderr, "fill: exit %d:\n%s", rc, out);
		return -1;
	}
	tmpl = read_whole(d.heap, &tmpl_len);
	snprintf(case_path, sizeof(case_path), "%s/case.uh", d.dir);
	snprintf(case_log, sizeof(case_log), "%s/case.log", d.dir);
	return tmpl ? plan_regions() : -1;
}

int main(void)
{
	const char *env = getenv("UH_DAMAGE_CASES"), *senv = getenv("UH_DAMAGE_SEED");
	const char *only = getenv("UH_DAMAGE_ONLY");
	long n = env ? atol(env) : 1000;
	uint64_t seed = senv ? strtoull(senv, NULL, 10) : (uint64_t)time(NULL);
	uint64_t t0 = th_now_ms();

	printf("%s: seed %llu (UH_DAMAGE_SEED=%llu reproduces)\n", SUITE,
	       (unsigned long long)seed, (unsigned long long)seed);
	if (make_template() != 0) {
		th_fail(__FILE__, __LINE__, "could not make the template heap");
		th_heapd_cleanup(&d);
		return th_summary(SUITE);
	}
	long from = only ? atol(only) : 0, to = only ? from + 1 : n;
	for (long i = from; i < to; i++) {
		run_case(seed, i);
		if ((i + 1) % 100 == 0)
			fflush(stdout);
	}
	printf("%ld damaged heaps in %llu ms: refused %ld (libpmemobj crashed or hung in the "
	       "probe %ld, failed its consistency check %ld, uniheap header %ld, other %ld), "
	       "served %ld (check sound %ld, check named a problem %ld)\n", to - from,
	       (unsigned long long)(th_now_ms() - t0), outcomes[REFUSED], refusal_kinds[0],
	       refusal_kinds[1], refusal_kinds[2], refusal_kinds[3],
	       outcomes[SERVED_OK] + outcomes[SERVED_PROBLEM], outcomes[SERVED_OK],
	       outcomes[SERVED_PROBLEM]);
	free(tmpl);
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
