/*
 * info.c -- what a program may ask about the library and a connected
 * heap: versions, the heap's size and name, the session's counters
 * (durability names: common/names.c). Nothing here changes any state.
 */
#include <stdio.h>
#include <string.h>

#include "uhint.h"

const char *uh_version(void)
{
	return "0.1.0";
}

uint32_t uh_format_version(void)
{
	return UH_FORMAT_VERSION;
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
