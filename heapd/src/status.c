/*
 * status.c -- read-only views of the heap and heapd's counters, for the
 * gRPC adapter's Status, Stats and admin calls.
 */
#include <string.h>

#include "core.h"
#include "rootmap_read.h"

/* Client sessions: heapd's own (the collector's, uh_hdr.gc_session) is
 * not one. */
static uint32_t count_sessions(struct hd *hd)
{
	const struct uh_session_ent *tab = hd_session_tab(hd);
	uint32_t n = 0;
	for (uint32_t i = 1; i < hd->hdr->session_cap; i++)	/* bounded by session_cap */
		n += tab[i].state == UH_SESS_ACTIVE && i != hd->hdr->gc_session;
	return n;
}

static uint32_t count_classes(struct hd *hd)
{
	uint32_t n = 0;
	for (uint32_t id = 1; id <= hd->hdr->class_count; id++)	/* < class_cap */
		n += hd_class_desc_locked(hd, id) != NULL;
	return n;
}

/* Live entries of the root map, 0 if its record is damaged (the offset
 * itself was checked against the heap at open). */
static uint64_t count_roots(struct hd *hd)
{
	const struct uh_objhdr *oh = (const struct uh_objhdr *)(hd->base + hd->hdr->rootmap_off);
	if (oh->class_word != UH_CLASS_ROOTMAP || !(oh->size & UH_OBJ_VALID))
		return 0;
	const struct uh_rootmap *rm = (const struct uh_rootmap *)(oh + 1);
	return __atomic_load_n(&rm->count, __ATOMIC_ACQUIRE);
}

void hd_status_get(struct hd *hd, struct hd_status *out)
{
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&hd->mu);
	out->sessions = count_sessions(hd);
	out->classes = count_classes(hd);
	out->arena_bytes = hd_arena_bytes_locked(hd, &out->arenas);
	out->roots = count_roots(hd);
	out->uptime_ms = (hd_mono_ns() - hd->start_mono_ns) / 1000000u;
	out->heapd_starts = hd->hdr->heapd_starts;
	out->last_recovery = hd->rec;
	pthread_mutex_unlock(&hd->mu);
}

void hd_stats_get(struct hd *hd, struct hd_stats *out)
{
	pthread_mutex_lock(&hd->mu);
	*out = hd->stats;
	hd_gc_client_counts_locked(hd, &out->commits, &out->conflicts);
	pthread_mutex_unlock(&hd->mu);
}

int hd_roots_next(struct hd *hd, uint64_t *cursor, const char **name, size_t *name_len,
		  uint64_t *value)
{
	pthread_mutex_lock(&hd->mu);
	int rc = uh_rootmap_next(hd->base, hd->heap_size, hd->hdr->rootmap_off, cursor, name,
				 name_len, value);
	pthread_mutex_unlock(&hd->mu);
	return rc;
}

/* These never change while hd lives, so they need no lock. */
const char *hd_heap_path(struct hd *hd)
{
	return hd->path;
}

const char *hd_gc_path(struct hd *hd)
{
	return hd->gcf ? hd->gc_path : "";
}

char *hd_base(struct hd *hd)
{
	return hd->base;
}

const struct uh_hdr *hd_header(struct hd *hd)
{
	return hd->hdr;
}

uint64_t hd_header_off(struct hd *hd)
{
	return hd->hdr_off;
}
