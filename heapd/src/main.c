/*
 * main.c -- heapd's command line: parse options, open (or create) the heap,
 * serve the control socket until SIGTERM/SIGINT, close.
 *
 * Exit status: 0 after a clean shutdown, 64 (EX_USAGE) for bad usage, 1
 * when the heap cannot be opened or served; the reason is one line on
 * stderr starting with "heapd: ".
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libpmem2.h>
#include <libpmemobj.h>

#include "core.h"
#include "sockpath.h"

#define EXIT_USAGE 64
#define DEFAULT_SIZE (256ull << 20)

#define USAGE_LINES \
	"usage: heapd --heap FILE [--create] [--size SIZE] [--socket PATH]\n" \
	"             [--durability pmem|sync|memory] [--name NAME] [--log-size SIZE]\n" \
	"             [--group GROUP] [--gc-file PATH] [--gc-every SIZE|off]\n" \
	"             [--gc-fill PCT|off] [--gc-nice N] [--recovery-gc auto|full]\n" \
	"             [--metrics HOST:PORT]\n" \
	"       heapd --help | --version\n"

static const char usage_text[] = USAGE_LINES
	"\n"
	"Owns a uniheap heap file and serves its control protocol (gRPC) on a\n"
	"UNIX socket.\n"
	"\n"
	"  --heap FILE        the heap file (a libpmemobj pool of layout \"uniheap\")\n"
	"  --create           create FILE if it does not exist\n"
	"  --size SIZE        size of a new heap (default 256M, minimum 12M);\n"
	"                     SIZE takes a K, M or G suffix\n"
	"  --max-size SIZE    the most a new heap may grow to, while clients run, when\n"
	"                     it is full or on heapctl grow (default: the free space\n"
	"                     of its file system on top of --size, at most 15G;\n"
	"                     equal to --size: a heap that never grows)\n"
	"  --durability MODE  of a new heap: pmem (DAX file), sync (default: survives\n"
	"                     power loss) or memory (survives process crashes only)\n"
	"  --name NAME        name of a new heap (default: the file name)\n"
	"  --log-size SIZE    redo log bytes per session of a new heap (default 1M)\n"
	"  --socket PATH      control socket (default: $UNIHEAP_SOCKET, else\n"
	"                     $XDG_RUNTIME_DIR/uniheap/heapd.sock, else\n"
	"                     /tmp/uniheap-$UID/heapd.sock; see uh_default_socket)\n"
	"  --group GROUP      share the heap with the users of GROUP (a name or a\n"
	"                     gid): the socket gets mode 0660, the heap file 0660,\n"
	"                     both of GROUP, and its members may connect (without it:\n"
	"                     only heapd's own user and root; modes 0600)\n"
	"  --gc-file PATH     run-time state shared with clients for the online\n"
	"                     garbage collector (default: the socket's path + .gc;\n"
	"                     a sparse file, removed when heapd stops)\n"
	"  --gc-fill PCT|off  run a GC cycle when the slots in use hold PCT % of\n"
	"                     what the heap can hold (checked every 100 ms;\n"
	"                     default 75). A lease that finds no space always\n"
	"                     runs a cycle and tries again. A C program that\n"
	"                     keeps objects without a root must pin them\n"
	"                     (uh_pin), or run with --gc-fill off.\n"
	"  --gc-every SIZE    also run a GC cycle each time SIZE bytes of arenas\n"
	"                     were leased since the last one (default off)\n"
	"  --gc-nice N        the nice value (0..19, default 10) of the collector's\n"
	"                     cycles that no client waits for, so that they take\n"
	"                     the CPU clients leave; a cycle a client needs for\n"
	"                     space runs at heapd's own priority\n"
	"  --recovery-gc MODE auto (default): when no power loss can have come since\n"
	"                     this heap file was last served (same boot, same file),\n"
	"                     serve at once and leave recovery's mark to an online\n"
	"                     GC cycle; full: always mark before serving (give it\n"
	"                     after putting a copy or image in place of the file)\n"
	"  --metrics HOST:PORT  serve Prometheus' text format at\n"
	"                     http://HOST:PORT/metrics (plain HTTP, no access\n"
	"                     control: give a loopback or otherwise guarded\n"
	"                     address; PORT 0 picks a free one, logged; default\n"
	"                     off)\n"
	"  --help             print this help\n"
	"  --version          print the version\n";

struct args {
	struct hd_opts o;
	const char *socket;
	gid_t group;		/* HD_NO_GROUP unless --group */
	const char *metrics;	/* --metrics HOST:PORT, NULL: none */
	const char *size_arg;
	const char *max_arg;	/* --max-size */
	int create_only;	/* an option that only means something with --create */
};

static void usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "heapd: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s(heapd --help explains the options)\n", USAGE_LINES);
	exit(EXIT_USAGE);
}

/* "256M" -> 268435456. K/M/G are powers of 1024; "MiB"/"MB" spellings are
 * accepted too. Returns 0 or -1 (bad syntax or overflow). */
static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	if (!s[0] || s[0] == '-')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	unsigned shift = 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	default: break;
	}
	if (shift && (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0))
		end += strlen(end);
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

static uint32_t parse_durability(const char *s)
{
	if (strcmp(s, "pmem") == 0)
		return UH_DUR_PMEM;
	if (strcmp(s, "sync") == 0)
		return UH_DUR_SYNC;
	if (strcmp(s, "memory") == 0)
		return UH_DUR_MEMORY;
	usage_error("--durability must be pmem, sync or memory, not '%s'", s);
	return 0;
}

static void parse_log_size(struct args *a, const char *s)
{
	uint64_t v;
	if (parse_size(s, &v))
		usage_error("--log-size: '%s' is not a size (e.g. 1M)", s);
	if (v < 65536)
		usage_error("--log-size %s is too small: minimum 64K", s);
	if (v > (1u << 30))
		usage_error("--log-size %s is too big: maximum 1G", s);
	a->o.log_size = (uint32_t)v;
}

static uint64_t parse_gc_every(const char *s)
{
	uint64_t v;
	if (!strcmp(s, "off"))
		return HD_GC_OFF;
	if (parse_size(s, &v) || v == 0)
		usage_error("--gc-every: '%s' is not a size (e.g. 16M) or off", s);
	return v;
}

static uint64_t parse_gc_fill(const char *s)
{
	char *end;
	if (!strcmp(s, "off"))
		return HD_GC_OFF;
	unsigned long v = strtoul(s, &end, 10);
	if (!s[0] || *end || v < 1 || v > 100)
		usage_error("--gc-fill: '%s' is not a percentage (1..100) or off", s);
	return v;
}

static int parse_gc_nice(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (!s[0] || *end || v > 19)
		usage_error("--gc-nice: '%s' is not a nice value (0..19)", s);
	return (int)v;
}

static int parse_recovery_gc(const char *s)
{
	if (!strcmp(s, "auto"))
		return HD_RECOVERY_AUTO;
	if (!strcmp(s, "full"))
		return HD_RECOVERY_FULL;
	usage_error("--recovery-gc: '%s' is neither auto nor full", s);
	return HD_RECOVERY_FULL;
}

/* --group: a group name, else a numeric gid. */
static gid_t parse_group(const char *s)
{
	struct group *g = getgrnam(s);
	if (g)
		return g->gr_gid;
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (!s[0] || *end || errno || s[0] == '-' || (gid_t)v != v || (gid_t)v == HD_NO_GROUP)
		usage_error("--group: no group named '%s' (give a group name or a gid)", s);
	return (gid_t)v;
}

static void parse_args(int argc, char **argv, struct args *a)
{
	static const struct option opts[] = {
		{ "heap", required_argument, NULL, 'h' },
		{ "create", no_argument, NULL, 'c' },
		{ "size", required_argument, NULL, 's' },
		{ "max-size", required_argument, NULL, 'm' },
		{ "socket", required_argument, NULL, 'S' },
		{ "durability", required_argument, NULL, 'd' },
		{ "name", required_argument, NULL, 'n' },
		{ "log-size", required_argument, NULL, 'l' },
		{ "group", required_argument, NULL, 'g' },
		{ "gc-file", required_argument, NULL, 'G' },
		{ "gc-every", required_argument, NULL, 'E' },
		{ "gc-fill", required_argument, NULL, 'F' },
		{ "gc-nice", required_argument, NULL, 'N' },
		{ "recovery-gc", required_argument, NULL, 'R' },
		{ "metrics", required_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'H' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	opterr = 0;	/* our own messages, followed by the usage */
	a->o.gc_nice = HD_GC_NICE_DEFAULT;
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'h': a->o.heap_path = optarg; break;
		case 'c': a->o.create = 1; break;
		case 's': a->size_arg = optarg; a->create_only = 1; break;
		case 'm': a->max_arg = optarg; a->create_only = 1; break;
		case 'S': a->socket = optarg; break;
		case 'd': a->o.durability = parse_durability(optarg); a->create_only = 1; break;
		case 'n': a->o.name = optarg; a->create_only = 1; break;
		case 'l': parse_log_size(a, optarg); a->create_only = 1; break;
		case 'g': a->group = parse_group(optarg); break;
		case 'G': a->o.gc_path = optarg; break;
		case 'E': a->o.gc_every = parse_gc_every(optarg); break;
		case 'F': a->o.gc_fill_pct = parse_gc_fill(optarg); break;
		case 'N': a->o.gc_nice = parse_gc_nice(optarg); break;
		case 'R': a->o.recovery_gc = parse_recovery_gc(optarg); break;
		case 'M': a->metrics = optarg; break;
		case 'H': fputs(usage_text, stdout); exit(0);
		case 'V':
			printf("heapd %d.%d.%d (heap format %u)\n", UH_VERSION_MAJOR,
			       UH_VERSION_MINOR, UH_VERSION_PATCH, UH_FORMAT_VERSION);
			exit(0);
		default:
			/* getopt sets optopt to the option's value when its
			 * argument is missing, 0 for an unknown option. */
			if (optopt)
				usage_error("option %s needs a value", argv[optind - 1]);
			usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
}

static void check_args(struct args *a)
{
	if (!a->o.heap_path || !a->o.heap_path[0])
		usage_error("%s", "--heap FILE is required");
	if (a->create_only && !a->o.create)
		usage_error("%s", "--size, --durability, --name and --log-size apply to a new "
			    "heap: add --create");
	a->o.size = DEFAULT_SIZE;
	if (a->size_arg && parse_size(a->size_arg, &a->o.size))
		usage_error("--size: '%s' is not a size (e.g. 256M)", a->size_arg);
	if (a->max_arg && parse_size(a->max_arg, &a->o.max_size))
		usage_error("--max-size: '%s' is not a size (e.g. 4G)", a->max_arg);
	uint64_t min = hd_min_heap_size(a->o.log_size, a->o.arena_size);
	if (a->o.size < min) {
		char m[32];
		snprintf(m, sizeof(m), "%lluM", (unsigned long long)((min + (1 << 20) - 1) >> 20));
		fprintf(stderr, "heapd: --size %s is too small: minimum %s\n",
			a->size_arg ? a->size_arg : "256M (the default)", m);
		fprintf(stderr, "%s(heapd --help explains the options)\n", USAGE_LINES);
		exit(EXIT_USAGE);
	}
	if (a->o.name && (!a->o.name[0] || strlen(a->o.name) > 63))
		usage_error("--name '%s' must be 1..63 bytes", a->o.name);
	if (a->o.create && !a->o.durability)
		a->o.durability = UH_DUR_SYNC;
}

/* ------------------------------------------------------------------ */

/* 1 if files in dir can be mapped with cache-line store granularity (DAX),
 * 0 if not, -1 with errbuf set if the probe itself failed. The probe file
 * is unlinked at once, so nothing is left behind. */
static int dir_is_dax(const char *file, char *errbuf, size_t len)
{
	char *copy = strdup(file);
	if (!copy)
		return -1;
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s/.heapd-dax-probe-XXXXXX", dirname(copy));
	free(copy);
	int fd = mkstemp(tmp);
	if (fd < 0) {
		snprintf(errbuf, len, "cannot create a file next to %s: %s", file, strerror(errno));
		return -1;
	}
	unlink(tmp);
	int res = -1;
	struct pmem2_config *cfg = NULL;
	struct pmem2_source *src = NULL;
	struct pmem2_map *map = NULL;
	if (ftruncate(fd, 2 << 20) != 0 || pmem2_config_new(&cfg) ||
	    pmem2_source_from_fd(&src, fd) ||
	    pmem2_config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_CACHE_LINE)) {
		snprintf(errbuf, len, "cannot probe the file system of %s: %s", file,
			 pmem2_errormsg());
		goto out;
	}
	int rc = pmem2_map_new(&map, cfg, src);
	if (rc == 0) {
		res = 1;
		pmem2_map_delete(&map);
	} else if (rc == PMEM2_E_GRANULARITY_NOT_SUPPORTED) {
		res = 0;
	} else {
		snprintf(errbuf, len, "cannot probe the file system of %s: %s", file,
			 pmem2_errormsg());
	}
out:
	if (src)
		pmem2_source_delete(&src);
	if (cfg)
		pmem2_config_delete(&cfg);
	close(fd);
	return res;
}

/* --durability pmem promises cache-line flushes reach persistence: refuse
 * it up front on a file system where they do not. */
static void check_pmem(const struct args *a)
{
	struct stat st;
	if (!a->o.create || a->o.durability != UH_DUR_PMEM || stat(a->o.heap_path, &st) == 0)
		return;	/* only a heap about to be created takes the mode */
	char err[512] = "";
	int dax = dir_is_dax(a->o.heap_path, err, sizeof(err));
	if (dax == 1)
		return;
	if (dax == 0)
		fprintf(stderr, "heapd: --durability pmem needs a DAX file; %s is on an ordinary "
			"file system (use sync or memory)\n", a->o.heap_path);
	else
		fprintf(stderr, "heapd: %s\n", err);
	exit(1);
}

/* The rule of uh_default_socket() (uniheap.h), shared with every client. */
static const char *default_socket(char *buf, size_t len)
{
	char err[512];
	if (uh_sockpath_default(buf, len, err, sizeof(err)) != 0) {
		fprintf(stderr, "heapd: %s\n", err);
		exit(1);
	}
	return buf;
}

int main(int argc, char **argv)
{
	struct args a;
	memset(&a, 0, sizeof(a));
	a.group = HD_NO_GROUP;
	parse_args(argc, argv, &a);
	check_args(&a);
	check_pmem(&a);
	char sockbuf[4200];
	const char *socket = a.socket ? a.socket : default_socket(sockbuf, sizeof(sockbuf));
	char gcbuf[4300];
	if (!a.o.gc_path) {
		snprintf(gcbuf, sizeof(gcbuf), "%s.gc", socket);
		a.o.gc_path = gcbuf;
	}

	struct hd *hd = NULL;
	char err[1024] = "";
	if (hd_open(&a.o, &hd, err, sizeof(err)) != 0) {
		fprintf(stderr, "heapd: %s\n", err[0] ? err : "cannot open the heap");
		return 1;
	}
	hd_log("info", "start", "version=%d.%d.%d pid=%d heap=%s socket=%s", UH_VERSION_MAJOR,
	       UH_VERSION_MINOR, UH_VERSION_PATCH, (int)getpid(), a.o.heap_path, socket);
	err[0] = '\0';
	int rc = hd_gc_start(hd, err, sizeof(err));
	if (rc == 0 && hd_spare_start(hd) != 0)
		hd_log("warn", "spare", "cannot start the thread that reserves arenas ahead: %s",
		       strerror(errno));
	/* Members of the group map the heap read-write, as heapd's user does. */
	if (rc == 0 && a.group != HD_NO_GROUP)
		rc = hd_share_path(hd_heap_path(hd), a.group, 0660, err, sizeof(err));
	if (rc == 0 && a.group != HD_NO_GROUP && hd_gc_path(hd)[0])
		rc = hd_share_path(hd_gc_path(hd), a.group, 0660, err, sizeof(err));
	if (rc == 0)
		rc = hd_serve_metrics(hd, socket, a.group, a.metrics, err, sizeof(err));
	hd_close(hd);
	if (rc != 0) {
		fprintf(stderr, "heapd: %s\n", err[0] ? err : "serving failed");
		return 1;
	}
	hd_log("info", "stop", "heap=%s", a.o.heap_path);
	return 0;
}
