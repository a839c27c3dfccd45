/*
 * session.c -- binding a handle to the session heapd welcomed it as:
 * the mapping must be of the very heap file heapd serves, and the log
 * area heapd assigned must lie inside it. Used at connect (heap.c) and
 * at re-attach (reattach.c), which must both refuse a heap that is not
 * the one mapped.
 */
#include <stdio.h>
#include <sys/stat.h>

#include "uhint.h"

/* A new session of an existing mapping must be on the very file mapped:
 * heapd may have been restarted on another heap since. */
int uh_same_heap(const struct uh_mapping *m, const struct uhc_welcome *w)
{
	struct stat st;

	if (stat(w->heap_path, &st) != 0 || st.st_dev != m->dev || st.st_ino != m->ino ||
	    w->heap_size < m->size || w->header_off != m->header_off)
		return uh_err_set(UH_EIO, "heapd at %s now serves %s, not the heap this "
				  "process mapped; connect anew with uh_connect()",
				  m->socket, w->heap_path);
	return 0;
}

int uh_session_bind(uh_heap *h, const struct uhc_welcome *w)
{
	struct uh_log_hdr *log = NULL;
	int rc;

	if (!h->readonly) {
		/* A log in the extension (FORMAT.md 1.1) may lie past what a
		 * mapping shared with older sessions has mapped so far. */
		if ((w->log_off > h->size || w->log_size > h->size - w->log_off) &&
		    (rc = uh_map_more(h)) != 0)
			return rc;
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
