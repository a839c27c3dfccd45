/*
 * heap.c -- connecting a session: attach to heapd, map the heap file with
 * libpmem2, check the header; persisting and counting barriers.
 */
#include <errno.h>
#include <fcntl.h>
#include <libpmem2.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "uhint.h"

/* Bumped in every forked child, so a handle can tell it crossed a fork
 * without a getpid() system call on every operation. */
static volatile uint32_t fork_gen;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void on_fork_child(void)
{
	fork_gen++;
}

static void install_atfork(void)
{
	pthread_atfork(NULL, NULL, on_fork_child);
}

const char *uh_version(void)
{
	return "0.1.0";
}

uint32_t uh_format_version(void)
{
	return UH_FORMAT_VERSION;
}

const char *uh_durability_name(uint32_t mode)
{
	switch (mode) {
	case UH_DUR_PMEM: return "pmem";
	case UH_DUR_SYNC: return "sync";
	case UH_DUR_MEMORY: return "memory";
	default: return "unknown";
	}
}

int uh_default_socket(char *buf, size_t len)
{
	const char *env = getenv("UNIHEAP_SOCKET");
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	int n;

	if (env && *env)
		n = snprintf(buf, len, "%s", env);
	else if (xdg && *xdg)
		n = snprintf(buf, len, "%s/uniheap/heapd.sock", xdg);
	else
		n = snprintf(buf, len, "var/heapd.sock");
	if (n < 0 || (size_t)n >= len)
		return uh_err_set(UH_ERANGE, "uh_default_socket: buffer of %zu bytes too small", len);
	return 0;
}

int uh_check_handle(uh_heap *h)
{
	if (!h)
		return uh_err_set(UH_EINVAL, "heap handle is NULL");
	if (h->fork_gen != fork_gen)
		return uh_err_set(UH_EFORK, "heap handle used in a forked child (pid %d "
				  "connected it); start the child with exec and connect there",
				  (int)h->pid);
	return 0;
}

int uh_check_writable(uh_heap *h, const char *fn)
{
	int rc = uh_check_handle(h);

	if (rc)
		return rc;
	if (h->readonly)
		return uh_err_set(UH_EREADONLY, "%s: heap is connected read-only", fn);
	return 0;
}

/* ---- persistence ---- */

static int range_cmp(const void *a, const void *b)
{
	const struct uh_range *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

void uh_flush(uh_heap *h, const void *addr, size_t len)
{
	h->st.flushes++;
	if (h->durability == UH_DUR_MEMORY || len == 0)
		return;
	if (h->durability == UH_DUR_PMEM) {
		pmem2_get_flush_fn(h->map)(addr, len);
		return;
	}
	/* sync: remember the range; the barrier msyncs merged ranges. */
	if (h->ndirty == h->dirty_cap) {
		uint32_t cap = h->dirty_cap ? h->dirty_cap * 2 : 64;
		struct uh_range *r = realloc(h->dirty, cap * sizeof(*r));
		if (!r) {	/* no memory to defer: persist now */
			pmem2_get_flush_fn(h->map)(addr, len);
			return;
		}
		h->dirty = r;
		h->dirty_cap = cap;
	}
	uint64_t s = (uint64_t)((const char *)addr - h->base);
	h->dirty[h->ndirty++] = (struct uh_range){ s, s + len };
}

static void sync_dirty(uh_heap *h)
{
	const uint64_t page = 4096;
	pmem2_flush_fn fl = pmem2_get_flush_fn(h->map);

	qsort(h->dirty, h->ndirty, sizeof(*h->dirty), range_cmp);
	for (uint32_t i = 0; i < h->ndirty;) {	/* bound: ndirty */
		uint64_t s = h->dirty[i].start & ~(page - 1);
		uint64_t e = h->dirty[i].end;
		/* Merge ranges within 16 pages: one msync beats many. */
		for (i++; i < h->ndirty && h->dirty[i].start <= e + 16 * page; i++)
			if (h->dirty[i].end > e)
				e = h->dirty[i].end;
		fl(h->base + s, e - s);
	}
	h->ndirty = 0;
}

void uh_barrier(uh_heap *h)
{
	if (++h->st.barriers == h->crash_at)
		kill(getpid(), SIGKILL);	/* test hook: die before barrier k */
	if (h->durability == UH_DUR_PMEM)
		pmem2_get_drain_fn(h->map)();
	else if (h->durability == UH_DUR_SYNC && h->ndirty)
		sync_dirty(h);
}

static void persist_flush(void *ctx, const void *a, size_t n)
{
	uh_flush(ctx, a, n);
}

static void persist_drain(void *ctx)
{
	uh_barrier(ctx);
}

/* ---- connect ---- */

static int map_heap(uh_heap *h, const struct uhc_welcome *w)
{
	struct pmem2_config *cfg = NULL;
	struct stat st;
	int rc = UH_EIO;

	h->fd = open(w->heap_path, h->readonly ? O_RDONLY : O_RDWR);
	if (h->fd < 0)
		return uh_err_set(UH_EIO, "cannot open heap file %s: %s", w->heap_path,
				  strerror(errno));
	if (fstat(h->fd, &st) != 0 || (uint64_t)st.st_size != w->heap_size)
		return uh_err_set(UH_EIO, "heap file %s has %lld bytes, heapd says %llu",
				  w->heap_path, (long long)st.st_size,
				  (unsigned long long)w->heap_size);
	if (pmem2_config_new(&cfg) || pmem2_source_from_fd(&h->src, h->fd))
		goto pmem_err;
	enum pmem2_granularity g = w->durability == UH_DUR_PMEM ?
		PMEM2_GRANULARITY_CACHE_LINE : PMEM2_GRANULARITY_PAGE;
	if (pmem2_config_set_required_store_granularity(cfg, g) ||
	    pmem2_config_set_protection(cfg, h->readonly ? PMEM2_PROT_READ :
					PMEM2_PROT_READ | PMEM2_PROT_WRITE) ||
	    pmem2_config_set_sharing(cfg, PMEM2_SHARED) ||
	    pmem2_map_new(&h->map, cfg, h->src))
		goto pmem_err;
	pmem2_config_delete(&cfg);
	h->base = pmem2_map_get_address(h->map);
	h->size = pmem2_map_get_size(h->map);
	return 0;
pmem_err:
	rc = uh_err_set(UH_EIO, "cannot map heap file %s: %s", w->heap_path, pmem2_errormsg());
	if (cfg)
		pmem2_config_delete(&cfg);
	return rc;
}

/* The header heapd pointed us at must be one we understand. */
static int check_header(uh_heap *h, const struct uhc_welcome *w)
{
	if (w->header_off < 64 || w->header_off > h->size - sizeof(struct uh_hdr))
		return uh_err_set(UH_EPROTO, "heapd sent header offset %llu outside the heap",
				  (unsigned long long)w->header_off);
	h->hdr = (struct uh_hdr *)(h->base + w->header_off);
	if (memcmp(h->hdr->magic, UH_MAGIC, 8) != 0)
		return uh_err_set(UH_EIO, "%s is not a uniheap heap (bad magic)", w->heap_path);
	if (h->hdr->format_version != UH_FORMAT_VERSION)
		return uh_err_set(UH_EIO, "%s has heap format version %u; this libuniheap "
				  "reads version %u", w->heap_path, h->hdr->format_version,
				  UH_FORMAT_VERSION);
	if (uh_fnv1a64(h->hdr, UH_HDR_CHECKSUM_LEN, UH_FNV_INIT) != h->hdr->hdr_checksum)
		return uh_err_set(UH_EIO, "heap header of %s is corrupt (checksum)", w->heap_path);
	if (h->readonly)
		return 0;
	if (w->log_off < UH_HDR_SIZE || w->log_size < 4096 ||
	    w->log_off > h->size - w->log_size)
		return uh_err_set(UH_EPROTO, "heapd sent a log area outside the heap");
	h->log = (struct uh_log_hdr *)(h->base + w->log_off);
	h->log_size = w->log_size;
	if (h->log->magic != UH_LOG_MAGIC || h->log->session != w->session)
		return uh_err_set(UH_EPROTO, "session log at %llu is not initialized",
				  (unsigned long long)w->log_off);
	return 0;
}

static const char *client_desc(char *buf, size_t len)
{
	extern char *program_invocation_short_name;
	snprintf(buf, len, "c/%s", program_invocation_short_name);
	return buf;
}

int uh_connect(const char *socket, uint32_t flags, uh_heap **out)
{
	char sock[4096], desc[128];
	struct uhc_welcome *w;
	uh_heap *h;
	int rc;

	uh_err_clear();
	pthread_once(&atfork_once, install_atfork);
	if (!out)
		return uh_err_set(UH_EINVAL, "uh_connect: out is NULL");
	if (!socket || !*socket) {
		if ((rc = uh_default_socket(sock, sizeof(sock))) != 0)
			return rc;
		socket = sock;
	}
	h = calloc(1, sizeof(*h));
	w = calloc(1, sizeof(*w));
	if (!h || !w) {
		free(h);
		free(w);
		return uh_err_set(UH_ENOMEM, "uh_connect: out of memory");
	}
	h->fd = -1;
	h->pid = getpid();
	h->fork_gen = fork_gen;
	h->rng = ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)h ^ 0x9e3779b97f4a7c15ull;
	h->readonly = (flags & UH_READONLY) != 0;
	rc = uhc_attach(socket, h->readonly, client_desc(desc, sizeof(desc)), &h->ctl, w);
	if (rc == 0)
		rc = map_heap(h, w);
	if (rc == 0)
		rc = check_header(h, w);
	if (rc != 0) {
		free(w);
		uh_disconnect(h);
		return rc;
	}
	h->session = w->session;
	h->durability = w->durability;
	snprintf(h->path, sizeof(h->path), "%s", w->heap_path);
	snprintf(h->name, sizeof(h->name), "%s", w->heap_name);
	free(w);
	h->persist = (struct uh_persist){ persist_flush, persist_drain, h };
	uh_arena_index_init(&h->ix, h->base, h->size, h->hdr);
	const char *crash = getenv("UH_CRASH_AT");
	h->crash_at = crash ? strtoull(crash, NULL, 10) : 0;
	*out = h;
	return 0;
}

void uh_disconnect(uh_heap *h)
{
	if (!h)
		return;
	int same_process = uh_check_handle(h) == 0;
	if (same_process && h->tx.depth)
		uh_abort(h);
	if (same_process && h->ctl)
		uh_alloc_release_all(h);
	/* After fork the child must not touch the parent's gRPC session; the
	 * parent still owns it. Only local memory is released. */
	if (h->ctl && same_process)
		uhc_detach(h->ctl);
	if (h->map)
		pmem2_map_delete(&h->map);
	if (h->src)
		pmem2_source_delete(&h->src);
	if (h->fd >= 0)
		close(h->fd);
	uh_arena_index_free(&h->ix);
	uh_tx_free_state(h);
	free(h->dirty);
	free(h);
}

int uh_heap_info(uh_heap *h, uh_info *out)
{
	int rc = uh_check_handle(h);
	if (rc)
		return rc;
	memset(out, 0, sizeof(*out));
	out->heap_size = h->size;
	out->format_version = h->hdr->format_version;
	out->durability = h->durability;
	out->session = h->session;
	out->readonly = h->readonly;
	snprintf(out->name, sizeof(out->name), "%s", h->name);
	snprintf(out->path, sizeof(out->path), "%s", h->path);
	return 0;
}

void *uh_base(uh_heap *h)
{
	return h ? h->base : NULL;
}

int uh_stats_get(uh_heap *h, uh_stats *out)
{
	int rc = uh_check_handle(h);
	if (rc)
		return rc;
	*out = h->st;
	return 0;
}
