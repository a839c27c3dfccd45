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

#include "pmtrace.h"
#include "sockpath.h"
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
	char err[512];
	int rc;

	uh_err_clear();
	if (!buf)
		return uh_err_set(UH_EINVAL, "uh_default_socket: buf is NULL");
	if ((rc = uh_sockpath_default(buf, len, err, sizeof(err))) != 0)
		return uh_err_set(rc, "%s", err);
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

void uh_flush(uh_heap *h, const void *addr, size_t len)
{
	h->st.flushes++;
	if (h->pmtrace)	/* the power-loss tests: in every mode, the protocol's ranges */
		uh_pmtrace_flush(h->base, h->size, addr, len, UH_PMT_FLUSH);
	if (h->durability == UH_DUR_MEMORY || len == 0)
		return;
	if (h->durability == UH_DUR_PMEM) {
		pmem2_get_flush_fn(h->m->map)(addr, len);
		return;
	}
	/* sync: remember the range; the barrier msyncs merged ranges. */
	if (h->ndirty == h->dirty_cap) {
		uint32_t cap = h->dirty_cap ? h->dirty_cap * 2 : 64;
		struct uh_range *r = realloc(h->dirty, cap * sizeof(*r));
		if (!r) {	/* no memory to defer: persist now */
			pmem2_get_flush_fn(h->m->map)(addr, len);
			return;
		}
		h->dirty = r;
		h->dirty_cap = cap;
	}
	uint64_t s = (uint64_t)((const char *)addr - h->base);
	h->dirty[h->ndirty++] = (struct uh_range){ s, s + len };
}

/* One msync over the span of every range flushed since the last barrier:
 * each msync call on a file costs the device a cache flush, and the kernel
 * writes only the dirty pages of the span (pages other sessions dirtied
 * there go to the media early, which the protocol always allows). */
static void sync_dirty(uh_heap *h)
{
	const uint64_t page = 4096;
	uint64_t s = h->dirty[0].start, e = h->dirty[0].end;

	for (uint32_t i = 1; i < h->ndirty; i++) {	/* bound: ndirty */
		if (h->dirty[i].start < s)
			s = h->dirty[i].start;
		if (h->dirty[i].end > e)
			e = h->dirty[i].end;
	}
	s &= ~(page - 1);
	pmem2_get_flush_fn(h->m->map)(h->base + s, e - s);
	h->ndirty = 0;
}

void uh_barrier(uh_heap *h)
{
	if (++h->st.barriers == h->crash_at)
		kill(getpid(), SIGKILL);	/* test hook: die before barrier k */
	uh_lazy_flush(h);	/* lazylog.c: older blocks' APPLIED goes with it */
	if (h->pmtrace)
		uh_pmtrace_write(UH_PMT_BARRIER, 0, NULL, 0);
	if (h->durability == UH_DUR_PMEM)
		pmem2_get_drain_fn(h->m->map)();
	else if (h->durability == UH_DUR_SYNC && h->ndirty)
		sync_dirty(h);
}

/* logapply's persist callbacks. UH_MUTANT=apply-flush or apply-barrier
 * (tests only) drops their flushes or their barrier: the power-loss test
 * must then report lost or torn blocks. */
static void persist_flush(void *ctx, const void *a, size_t n)
{
	uh_heap *h = ctx;

	if (h->mutant != UH_MUTANT_APPLY_FLUSH)
		uh_flush(h, a, n);
}

static void persist_drain(void *ctx)
{
	uh_heap *h = ctx;

	if (h->mutant != UH_MUTANT_APPLY_BARRIER)
		uh_barrier(h);
}

static int mutant_of(const char *s)
{
	if (s && !strcmp(s, "apply-flush"))
		return UH_MUTANT_APPLY_FLUSH;
	if (s && !strcmp(s, "apply-barrier"))
		return UH_MUTANT_APPLY_BARRIER;
	if (s && !strcmp(s, "lazy-flush"))
		return UH_MUTANT_LAZY_FLUSH;
	return 0;
}

/* ---- connect ---- */

/* Map the heap file heapd named in w into a new struct uh_mapping. */
static int map_heap(struct uh_mapping *m, const struct uhc_welcome *w)
{
	struct pmem2_config *cfg = NULL;
	struct stat st;
	int rc = UH_EIO;

	m->fd = open(w->heap_path, m->readonly ? O_RDONLY : O_RDWR);
	if (m->fd < 0)
		return uh_err_set(UH_EIO, "cannot open heap file %s: %s", w->heap_path,
				  strerror(errno));
	if (fstat(m->fd, &st) != 0 || (uint64_t)st.st_size != w->heap_size)
		return uh_err_set(UH_EIO, "heap file %s has %lld bytes, heapd says %llu",
				  w->heap_path, (long long)st.st_size,
				  (unsigned long long)w->heap_size);
	m->dev = st.st_dev;
	m->ino = st.st_ino;
	if (pmem2_config_new(&cfg) || pmem2_source_from_fd(&m->src, m->fd))
		goto pmem_err;
	enum pmem2_granularity g = w->durability == UH_DUR_PMEM ?
		PMEM2_GRANULARITY_CACHE_LINE : PMEM2_GRANULARITY_PAGE;
	if (pmem2_config_set_required_store_granularity(cfg, g) ||
	    pmem2_config_set_protection(cfg, m->readonly ? PMEM2_PROT_READ :
					PMEM2_PROT_READ | PMEM2_PROT_WRITE) ||
	    pmem2_config_set_sharing(cfg, PMEM2_SHARED) ||
	    pmem2_map_new(&m->map, cfg, m->src))
		goto pmem_err;
	pmem2_config_delete(&cfg);
	m->base = pmem2_map_get_address(m->map);
	m->size = pmem2_map_get_size(m->map);
	m->header_off = w->header_off;
	return 0;
pmem_err:
	rc = uh_err_set(UH_EIO, "cannot map heap file %s: %s", w->heap_path, pmem2_errormsg());
	if (cfg)
		pmem2_config_delete(&cfg);
	return rc;
}

static void mapping_put(struct uh_mapping *m)
{
	if (!m || __atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	if (m->map)
		pmem2_map_delete(&m->map);
	if (m->src)
		pmem2_source_delete(&m->src);
	if (m->fd >= 0)
		close(m->fd);
	free(m);
}

/* A new session of an existing mapping must be on the very file mapped:
 * heapd may have been restarted on another heap since. */
int uh_same_heap(const struct uh_mapping *m, const struct uhc_welcome *w)
{
	struct stat st;

	if (stat(w->heap_path, &st) != 0 || st.st_dev != m->dev || st.st_ino != m->ino ||
	    w->heap_size != m->size || w->header_off != m->header_off)
		return uh_err_set(UH_EIO, "heapd at %s now serves %s, not the heap this "
				  "process mapped; connect anew with uh_connect()",
				  m->socket, w->heap_path);
	return 0;
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
	/* heapd upgrades a version 1 heap before it accepts a client. */
	if (h->hdr->format_version != UH_FORMAT_VERSION)
		return uh_err_set(UH_EIO, "%s has heap format version %u; this libuniheap "
				  "reads version %u", w->heap_path, h->hdr->format_version,
				  UH_FORMAT_VERSION);
	if (uh_fnv1a64(h->hdr, UH_HDR_CHECKSUM_LEN, UH_FNV_INIT) != h->hdr->hdr_checksum)
		return uh_err_set(UH_EIO, "heap header of %s is corrupt (checksum)", w->heap_path);
	return uh_session_bind(h, w);
}

int uh_session_bind(uh_heap *h, const struct uhc_welcome *w)
{
	struct uh_log_hdr *log = NULL;

	if (!h->readonly) {
		if (w->log_off < UH_HDR_SIZE || w->log_size < 4096 ||
		    w->log_off > h->size - w->log_size)
			return uh_err_set(UH_EPROTO, "heapd sent a log area outside the heap");
		log = (struct uh_log_hdr *)(h->base + w->log_off);
		if (log->magic != UH_LOG_MAGIC || log->session != w->session)
			return uh_err_set(UH_EPROTO, "session log at %llu is not initialized",
					  (unsigned long long)w->log_off);
	}
	h->log = log;
	h->log_size = log ? w->log_size : 0;
	h->session = w->session;
	h->token = w->token;
	/* Read after Welcome: the heapd that welcomed us has bumped it. */
	h->starts = __atomic_load_n(&h->hdr->heapd_starts, __ATOMIC_ACQUIRE);
	return 0;
}

const char *uh_client_desc(char *buf, size_t len)
{
	extern char *program_invocation_short_name;
	snprintf(buf, len, "c/%s", program_invocation_short_name);
	return buf;
}

/* Attach a new session to heapd at socket and bind it to mapping m, or,
 * when m is NULL, to a new mapping of the heap heapd names. */
static int open_session(const char *socket, int readonly, struct uh_mapping *m,
			uh_heap **out)
{
	char desc[128];
	struct uhc_welcome *w;
	uh_heap *h;
	int rc;

	h = calloc(1, sizeof(*h));
	w = calloc(1, sizeof(*w));
	if (!h || !w) {
		free(h);
		free(w);
		return uh_err_set(UH_ENOMEM, "uh_connect: out of memory");
	}
	h->pid = getpid();
	h->fork_gen = fork_gen;
	h->rng = ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)h ^ 0x9e3779b97f4a7c15ull;
	h->readonly = readonly;
	rc = uhc_attach(socket, h->readonly, uh_client_desc(desc, sizeof(desc)), 0, 0, &h->ctl, w);
	if (rc == 0 && m) {
		__atomic_add_fetch(&m->refs, 1, __ATOMIC_ACQ_REL);
		h->m = m;
		rc = uh_same_heap(m, w);
	} else if (rc == 0) {
		if (!(m = calloc(1, sizeof(*m)))) {
			rc = uh_err_set(UH_ENOMEM, "uh_connect: out of memory");
		} else {
			m->refs = 1;
			m->fd = -1;
			m->readonly = readonly;
			snprintf(m->socket, sizeof(m->socket), "%s", socket);
			h->m = m;
			rc = map_heap(m, w);
		}
	}
	if (rc == 0) {
		h->base = h->m->base;
		h->size = h->m->size;
		rc = check_header(h, w);
	}
	if (rc != 0) {
		free(w);
		uh_disconnect(h);
		return rc;
	}
	h->durability = w->durability;
	snprintf(h->path, sizeof(h->path), "%s", w->heap_path);
	snprintf(h->name, sizeof(h->name), "%s", w->heap_name);
	free(w);
	h->persist = (struct uh_persist){ persist_flush, persist_drain, h };
	uh_arena_index_init(&h->ix, h->base, h->size, h->hdr);
	const char *crash = getenv("UH_CRASH_AT");
	h->crash_at = crash ? strtoull(crash, NULL, 10) : 0;
	h->pmtrace = uh_pmtrace_on();
	h->mutant = mutant_of(getenv("UH_MUTANT"));
	*out = h;
	return 0;
}

int uh_connect(const char *socket, uint32_t flags, uh_heap **out)
{
	char sock[4096];
	int rc;

	uh_err_clear();
	pthread_once(&atfork_once, install_atfork);
	if (!out)
		return uh_err_set(UH_EINVAL, "uh_connect: out is NULL");
	if (flags & ~UH_READONLY)
		return uh_err_set(UH_EINVAL, "uh_connect: unknown flags 0x%x", flags);
	if (!socket || !*socket) {
		if ((rc = uh_default_socket(sock, sizeof(sock))) != 0)
			return rc;
		socket = sock;
	}
	if (strlen(socket) >= sizeof(sock))
		return uh_err_set(UH_EINVAL, "uh_connect: socket path longer than %zu bytes",
				  sizeof(sock) - 1);
	return open_session(socket, (flags & UH_READONLY) != 0, NULL, out);
}

int uh_session_open(uh_heap *h, uint32_t flags, uh_heap **out)
{
	int rc = uh_check_handle(h);

	uh_err_clear();
	if (rc)
		return rc;
	if (!out)
		return uh_err_set(UH_EINVAL, "uh_session_open: out is NULL");
	if (flags & ~UH_READONLY)
		return uh_err_set(UH_EINVAL, "uh_session_open: unknown flags 0x%x", flags);
	int readonly = h->m->readonly || (flags & UH_READONLY);
	return open_session(h->m->socket, readonly, h->m, out);
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
	mapping_put(h->m);
	uh_arena_index_free(&h->ix);
	uh_tx_free_state(h);
	uh_logchain_free(h);
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
