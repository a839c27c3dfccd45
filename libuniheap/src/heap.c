/*
 * heap.c -- a handle's lifetime: connect (attach to heapd, map the heap
 * file with libpmem2, check the header, bind the session), open more
 * sessions of the same mapping, disconnect. The top of the library: it
 * sets up what every other file uses (handle.c's stamp, barrier.c's
 * persist hooks, reattach.c's recovery table) and tears it down.
 */
#include <errno.h>
#include <fcntl.h>
#include <libpmem2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sockpath.h"
#include "uhint.h"

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

/* ---- connect ---- */

/* The most the heap may grow to, from its header's growth words
 * (FORMAT.md 2.2), read before the file is mapped: the reservation is
 * made first. A header that cannot be read here, or words out of order,
 * reserve just the file; check_header judges the header afterwards. */
static uint64_t max_size_of(int fd, const struct uhc_welcome *w)
{
	struct uh_hdr hh;
	if (w->header_off > w->heap_size || w->heap_size - w->header_off < sizeof(hh) ||
	    pread(fd, &hh, sizeof(hh), (off_t)w->header_off) != (ssize_t)sizeof(hh))
		return w->heap_size;
	uint64_t max = uh_hdr_max_size(&hh);
	return max >= w->heap_size && max < UH_HEAP_SIZE_MAX ? max : w->heap_size;
}

/* Reserve the heap's address space and configure the mapping into its
 * start (FORMAT.md 1.1). The reservation is a multiple of the source's
 * alignment (a page, or 2 MiB on DAX). */
static int reserve(struct uh_mapping *m, struct pmem2_config *cfg, const struct uhc_welcome *w)
{
	size_t align = 0;
	if (pmem2_source_alignment(m->src, &align) || align == 0)
		return -1;
	uint64_t max = max_size_of(m->fd, w);
	m->reserved = (max + align - 1) / align * align;
	if (pmem2_vm_reservation_new(&m->rsv, NULL, (size_t)m->reserved))
		return -1;
	if (pmem2_config_set_vm_reservation(cfg, m->rsv, 0))
		return -1;
	/* The whole file, unless it is longer than the heap (a growth under
	 * way): then the heap's bytes, which end on a chunk boundary. */
	struct stat st;
	if (fstat(m->fd, &st) != 0 || (uint64_t)st.st_size == w->heap_size)
		return 0;
	uint64_t len = (w->heap_size + align - 1) / align * align;
	return pmem2_config_set_length(cfg, (size_t)len);
}

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
	/* Longer is a growth under way (FORMAT.md 1.1): its part is not the
	 * heap's until heapd publishes it, and is not mapped. */
	if (fstat(m->fd, &st) != 0 || (uint64_t)st.st_size < w->heap_size)
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
	    pmem2_config_set_sharing(cfg, PMEM2_SHARED) || reserve(m, cfg, w) ||
	    pmem2_map_new(&m->map, cfg, m->src))
		goto pmem_err;
	pmem2_config_delete(&cfg);
	m->base = pmem2_map_get_address(m->map);
	m->size = pmem2_map_get_size(m->map);
	m->mapped = m->size;
	m->gran = (int)g;
	if (m->size > w->heap_size)
		m->size = w->heap_size;	/* the rest of the last page is not the heap's */
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
	uh_gc_unmap(m);
	uh_map_more_unmap(m);
	if (m->map)
		pmem2_map_delete(&m->map);
	if (m->rsv)
		pmem2_vm_reservation_delete(&m->rsv);	/* empty now */
	if (m->src)
		pmem2_source_delete(&m->src);
	if (m->fd >= 0)
		close(m->fd);
	free(m);
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

/* Attach a new session to heapd at socket (waiting up to timeout_ms for
 * heapd, connwait.c) and bind it to mapping m, or, when m is NULL, to a
 * new mapping of the heap heapd names. */
static int open_session(const char *socket, int readonly, int timeout_ms,
			struct uh_mapping *m, uh_heap **out)
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
	uh_handle_stamp(h);
	h->recover = &uh_reattach_recovery;
	h->rng = ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)h ^ 0x9e3779b97f4a7c15ull;
	h->readonly = readonly;
	rc = uh_attach_wait(socket, h->readonly, uh_client_desc(desc, sizeof(desc)), timeout_ms,
			    &h->ctl, w);
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
	if (rc == 0)
		rc = uh_gc_attach(h, w->gc_path, w->session);
	if (rc != 0) {
		free(w);
		uh_disconnect(h);
		return rc;
	}
	h->durability = w->durability;
	snprintf(h->path, sizeof(h->path), "%s", w->heap_path);
	snprintf(h->name, sizeof(h->name), "%s", w->heap_name);
	free(w);
	uh_barrier_init(h);
	uh_arena_index_init(&h->ix, h->base, h->size, h->hdr);
	uh_map_more_hook(h);
	*out = h;
	return 0;
}

int uh_connect(const char *socket, uint32_t flags, uh_heap **out)
{
	return uh_connect_timeout(socket, flags, UH_CONNECT_DEFAULT, out);
}

int uh_connect_timeout(const char *socket, uint32_t flags, int timeout_ms, uh_heap **out)
{
	char sock[4096];
	int rc;

	uh_err_clear();
	uh_handle_watch_fork();
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
	return open_session(socket, (flags & UH_READONLY) != 0,
			    uh_connect_timeout_resolve(timeout_ms), NULL, out);
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
	return open_session(h->m->socket, readonly, 0, h->m, out);
}

void uh_disconnect(uh_heap *h)
{
	if (!h)
		return;
	/* Not uh_check_handle: that would attach an inherited handle anew. */
	int same_process = !uh_handle_inherited(h);
	if (same_process && h->tx.depth)
		uh_abort(h);
	if (same_process && h->ctl)
		uh_alloc_release_all(h);
	/* A handle inherited through fork and not used since: the child must
	 * not touch the parent's session; the parent still owns it. Only
	 * local memory is released. */
	if (h->ctl && same_process)
		uhc_detach(h->ctl);
	uh_gc_detach(h);
	mapping_put(h->m);
	uh_arena_index_free(&h->ix);
	uh_tx_free_state(h);
	uh_logchain_free(h);
	free(h->dirty);
	free(h);
}
