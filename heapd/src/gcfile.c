/*
 * gcfile.c -- the GC file (common/gcfile.h, FORMAT.md 9.3): run-time
 * state heapd's online collector shares with the clients, beside the
 * heap. heapd makes it at start, every client maps it whole.
 *
 * Invariants:
 *  - The file is sparse and UH_GC_FILE_SIZE(session_cap) long; pages of
 *    areas nobody touched use no memory, and an area is given back
 *    (zeroed, its pages released) when its slot changes hands.
 *  - A file is reused as it is only when it serves this very heap (dev,
 *    ino and geometry in its header) and sessions of a previous heapd are
 *    still attached (hd->inherited): their clients map it, and their pins
 *    there are what keeps their objects alive until they re-attach.
 *    Otherwise it is replaced by a new file (a client still mapping the
 *    old one keeps its copy until it re-attaches and moves its pins).
 *  - heapd never writes a session's area except to zero it here; the
 *    collector writes only each ring's tail. What a ring holds that the
 *    collector has not consumed is kept for a running cycle before the
 *    area is zeroed (hd->gc_left).
 *  - An area's `commits` and `conflicts` are counted once: before the
 *    area is zeroed, or when a re-attach leaves it, what it gained since
 *    last counted (gc_counted) is added to hd->gc_ended; a reused file's
 *    counts at start are a previous heapd's and never added.
 *  - heapd holds an exclusive flock on the file while it maps it (the
 *    mapping keeps the open file description, and so the lock, after the
 *    descriptor is closed): a second heapd started on the same socket
 *    path never replaces a file a running heapd serves.
 *  - hd_gcfile_close leaves the file in place while sessions are still
 *    attached (heapd stops, its clients run on and re-attach to the next
 *    heapd, which then reuses it), else removes it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"

/* 1 if the header describes a GC file of this heap and geometry. */
static int header_fits(const struct uh_gc_filehdr *g, const struct stat *heap, uint32_t cap)
{
	return g->magic == UH_GC_MAGIC && g->version == UH_GC_FILE_VERSION &&
	       g->session_cap == cap && g->ring_cap == UH_GC_RING_CAP &&
	       g->area_size == UH_GC_AREA_SIZE && g->pin_off == UH_GC_PIN_OFF &&
	       g->pin_cap == UH_GC_PIN_CAP && g->heap_dev == (uint64_t)heap->st_dev &&
	       g->heap_ino == (uint64_t)heap->st_ino;
}

/* An existing file at path that clients of a previous heapd still map:
 * its fd, locked, else -1 (none, another heap's, one a running heapd
 * holds, or nobody left to care). */
static int open_reusable(struct hd *hd, const char *path, const struct stat *heap)
{
	if (!hd->ninherited)
		return -1;
	int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	struct uh_gc_filehdr g;
	struct stat st;
	uint64_t size = UH_GC_FILE_SIZE(hd->hdr->session_cap);
	if (flock(fd, LOCK_EX | LOCK_NB) != 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != size ||
	    pread(fd, &g, sizeof(g), 0) != (ssize_t)sizeof(g) ||
	    !header_fits(&g, heap, hd->hdr->session_cap)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A new, empty file at path (whatever was there is unlinked first: a
 * client still mapping it keeps its pages). Its mode and group are the
 * heap file's, so whoever may map the heap may map this. */
static int create_file(struct hd *hd, const char *path, const struct stat *heap, char *err,
		       size_t errlen)
{
	int old = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (old >= 0) {
		int busy = flock(old, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
		close(old);
		if (busy)
			return hd_err(err, errlen, UH_EIO, "the GC file %s is in use by another "
				      "heapd (give this one --gc-file or another --socket)",
				      path), -1;
	}
	if (unlink(path) != 0 && errno != ENOENT)
		return hd_err(err, errlen, UH_EIO, "cannot replace the GC file %s: %s", path,
			      strerror(errno)), -1;
	mode_t mode = heap->st_mode & 0660;
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0 && errno == ENOENT)
		return -2;	/* no such folder (yet): see hd_gcfile_open */
	if (fd < 0)
		return hd_err(err, errlen, UH_EIO, "cannot create the GC file %s: %s", path,
			      strerror(errno)), -1;
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		hd_err(err, errlen, UH_EIO, "cannot lock the GC file %s: %s", path,
		       strerror(errno));
		close(fd);
		return -1;
	}
	/* The umask may have taken bits the heap file has; a group other
	 * than ours only when heapd may give it (best effort, like the heap
	 * file's own sharing in main.c). */
	if (fchmod(fd, mode) != 0 || (fchown(fd, (uid_t)-1, heap->st_gid) != 0 && errno != EPERM))
		hd_log("warn", "gcfile_mode", "path=%s reason=%s", path, strerror(errno));
	uint64_t size = UH_GC_FILE_SIZE(hd->hdr->session_cap);
	if (ftruncate(fd, (off_t)size) != 0) {
		hd_err(err, errlen, UH_EIO, "cannot size the GC file %s: %s", path,
		       strerror(errno));
		close(fd);
		unlink(path);
		return -1;
	}
	return fd;
}

static void fill_header(struct hd *hd, const struct stat *heap)
{
	struct uh_gc_filehdr *g = (struct uh_gc_filehdr *)hd->gcf;
	g->version = UH_GC_FILE_VERSION;
	g->session_cap = hd->hdr->session_cap;
	g->ring_cap = UH_GC_RING_CAP;
	g->area_size = UH_GC_AREA_SIZE;
	g->pin_off = UH_GC_PIN_OFF;
	g->pin_cap = UH_GC_PIN_CAP;
	g->heap_dev = (uint64_t)heap->st_dev;
	g->heap_ino = (uint64_t)heap->st_ino;
	g->heapd_starts = hd->hdr->heapd_starts;
	g->mark_begun = 0;	/* a reused file's: of the previous heapd's cycles */
	g->space_asked = 0;	/* clients read it afresh when they bind (re-attach) */
	/* Last: a client checks the magic before it trusts the rest. */
	__atomic_store_n(&g->magic, UH_GC_MAGIC, __ATOMIC_RELEASE);
}

/* A reused file: the commits and conflicts so far of the areas sessions
 * of the previous heapd still hold were counted by that heapd (the other
 * areas are zeroed uncounted, reset_orphans). */
static void take_counts(struct hd *hd)
{
	for (uint32_t s = 1; s < hd->hdr->session_cap; s++) {	/* < cap */
		if (!hd->inherited[s])
			continue;
		const struct uh_gc_sess *cs = hd_gc_sess(hd, s);
		hd->gc_counted[s][0] = __atomic_load_n(&cs->commits, __ATOMIC_RELAXED);
		hd->gc_counted[s][1] = __atomic_load_n(&cs->conflicts, __ATOMIC_RELAXED);
	}
}

/* Add what slot's area gained since it was last counted to gc_ended. */
static void count_area(struct hd *hd, uint32_t slot)
{
	const struct uh_gc_sess *cs = hd_gc_sess(hd, slot);
	uint64_t now[2] = { __atomic_load_n(&cs->commits, __ATOMIC_RELAXED),
			    __atomic_load_n(&cs->conflicts, __ATOMIC_RELAXED) };
	for (int i = 0; i < 2; i++) {
		/* A client only counts up; anything else is not a count. */
		if (now[i] > hd->gc_counted[slot][i])
			hd->gc_ended[i] += now[i] - hd->gc_counted[slot][i];
		hd->gc_counted[slot][i] = now[i];
	}
}

void hd_gc_client_counts_locked(struct hd *hd, uint64_t *commits, uint64_t *conflicts)
{
	uint64_t sum[2] = { hd->gc_ended[0], hd->gc_ended[1] };
	if (hd->gcf && hd->gc_counted) {
		const struct uh_session_ent *tab = hd_session_tab(hd);
		for (uint32_t s = 1; s < hd->hdr->session_cap; s++) {	/* < cap */
			if (tab[s].state != UH_SESS_ACTIVE)
				continue;
			const struct uh_gc_sess *cs = hd_gc_sess(hd, s);
			uint64_t now[2] = { __atomic_load_n(&cs->commits, __ATOMIC_RELAXED),
					    __atomic_load_n(&cs->conflicts, __ATOMIC_RELAXED) };
			for (int i = 0; i < 2; i++)
				if (now[i] > hd->gc_counted[s][i])
					sum[i] += now[i] - hd->gc_counted[s][i];
		}
	}
	*commits = sum[0];
	*conflicts = sum[1];
}

const char *hd_gc_ring_lost(struct uh_gc_sess *gs, uint64_t cycle, uint64_t *head,
			    uint64_t *tail)
{
	uint64_t seen = __atomic_load_n(&gs->seen, __ATOMIC_ACQUIRE);
	*head = __atomic_load_n(&gs->head, __ATOMIC_ACQUIRE);
	*tail = gs->tail;
	if (__atomic_load_n(&gs->overflow, __ATOMIC_ACQUIRE) && uh_gc_cycle(seen) == cycle)
		return "given up: a grey ring overflowed";
	if (*head - *tail > UH_GC_RING_CAP)
		return "given up: a grey ring is inconsistent";
	return NULL;
}

/* While a cycle runs, keep what slot's ring holds that the collector has
 * not consumed (hd->gc_left), before the area is zeroed. A session that
 * moved a reference during the mark (a hash map's resize moves entries
 * from the old table to the new) pushed the old place's value; if the
 * new place was scanned already, that entry is the reference's only
 * trace, and a session may end (detach, or die and be reaped) before
 * the collector drains its ring. Losing them freed live objects. */
static void keep_left_greys(struct hd *hd, struct uh_gc_sess *cs, const uint64_t *ring)
{
	uint64_t state = __atomic_load_n(&hd->hdr->gc_state, __ATOMIC_ACQUIRE);
	uint64_t cycle = uh_gc_cycle(state);
	if (uh_gc_phase(state) == UH_GC_IDLE)
		return;		/* pushes of an ended cycle, or none */
	uint64_t head, tail;
	if (hd_gc_ring_lost(cs, cycle, &head, &tail)) {
		hd->gc_left_lost = cycle;
		return;
	}
	for (; tail < head; tail++) {	/* <= UH_GC_RING_CAP */
		if (u64vec_push(&hd->gc_left, ring[tail % UH_GC_RING_CAP])) {
			hd->gc_left_lost = cycle;
			return;
		}
	}
}

/* Zero slot's area (a valid slot of a mapped file), having added its
 * counts to gc_ended when count is set (not for a previous heapd's) and
 * kept its ring's unconsumed entries for a running cycle. */
static void area_reset(struct hd *hd, uint32_t slot, int count)
{
	char *area = hd->gcf + UH_GC_AREA_OFF(slot);
	struct uh_gc_sess *cs = (struct uh_gc_sess *)area;
	uint64_t hwm = __atomic_load_n(&cs->pin_hwm, __ATOMIC_ACQUIRE);
	if (count)
		count_area(hd, slot);
	keep_left_greys(hd, cs, hd_gc_ring(hd, slot));
	/* The rest of the control line's page, the ring and the pins: their
	 * pages go back to the system and read as zeroes from now on. */
	uint64_t from = (uint64_t)sysconf(_SC_PAGESIZE);
	if (madvise(area + from, UH_GC_AREA_SIZE - from, MADV_REMOVE) != 0) {
		/* A file system without hole punching: zero what a client can
		 * have touched, the ring and the pins below its high-water
		 * mark (it raises the mark before it uses an entry). */
		memset(area + from, 0, UH_GC_PIN_OFF - from);
		memset(area + UH_GC_PIN_OFF, 0, 8 * (hwm < UH_GC_PIN_CAP ? hwm : UH_GC_PIN_CAP));
	}
	memset(area, 0, from);
	hd->gc_counted[slot][0] = hd->gc_counted[slot][1] = 0;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* A reused file: the areas of slots no inherited session holds are left
 * overs of sessions that ended with the previous heapd; give them back. */
static void reset_orphans(struct hd *hd)
{
	for (uint32_t s = 1; s < hd->hdr->session_cap; s++) {	/* < cap */
		if (!hd->inherited[s])
			area_reset(hd, s, 0);
	}
	struct uh_gc_filehdr *g = (struct uh_gc_filehdr *)hd->gcf;
	__atomic_store_n(&g->heapd_starts, hd->hdr->heapd_starts, __ATOMIC_RELEASE);
}

int hd_gcfile_open(struct hd *hd, const char *path, char *err, size_t errlen)
{
	struct stat heap;
	if (stat(hd->path, &heap) != 0)
		return hd_err(err, errlen, UH_EIO, "cannot stat %s: %s", hd->path,
			      strerror(errno));
	hd->gc_path = strdup(path);
	if (!hd->gc_path)
		return hd_err(err, errlen, UH_ENOMEM, "out of memory");
	int fd = open_reusable(hd, path, &heap);
	int reused = fd >= 0;
	if (!reused)
		fd = create_file(hd, path, &heap, err, errlen);
	if (fd == -2) {
		/* The socket's folder is made when heapd starts serving, after
		 * this: a heapd whose GC file has no folder runs without one
		 * (clients' pins are no-ops, nothing is collected online). */
		hd_log("warn", "gcfile_none", "path=%s reason=\"no such folder\"", path);
		free(hd->gc_path);
		hd->gc_path = NULL;
		return 0;
	}
	if (fd < 0)
		goto fail;
	uint64_t size = UH_GC_FILE_SIZE(hd->hdr->session_cap);
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int e = errno;
	close(fd);
	if (p == MAP_FAILED) {
		hd_err(err, errlen, UH_EIO, "cannot map the GC file %s: %s", path, strerror(e));
		if (!reused)
			unlink(path);
		goto fail;
	}
	hd->gcf = p;
	hd->gcf_size = size;
	hd->gcf_reused = reused;
	hd->gc_counted = calloc(hd->hdr->session_cap, sizeof(*hd->gc_counted));
	if (!hd->gc_counted) {
		munmap(p, size);
		hd->gcf = NULL;
		hd_err(err, errlen, UH_ENOMEM, "out of memory");
		if (!reused)
			unlink(path);
		goto fail;
	}
	if (reused) {
		take_counts(hd);
		reset_orphans(hd);
	} else {
		fill_header(hd, &heap);
	}
	hd_log("info", "gcfile", "path=%s reused=%d", path, reused);
	return 0;
fail:
	free(hd->gc_path);
	hd->gc_path = NULL;
	return UH_EIO;
}

/* Sessions attached now: their clients map the file and may re-attach
 * to the next heapd, which should then find their pins in it. */
static int sessions_attached(struct hd *hd)
{
	const struct uh_session_ent *tab = hd_session_tab(hd);
	for (uint32_t s = 1; s < hd->hdr->session_cap; s++) {	/* < cap */
		if (tab[s].state == UH_SESS_ACTIVE)
			return 1;
	}
	return 0;
}

void hd_gcfile_close(struct hd *hd)
{
	if (!hd->gcf)
		return;
	int keep = hd->hdr && sessions_attached(hd);
	munmap(hd->gcf, hd->gcf_size);
	hd->gcf = NULL;
	hd->gcf_size = 0;
	free(hd->gc_counted);
	hd->gc_counted = NULL;
	free(hd->gc_left.v);
	memset(&hd->gc_left, 0, sizeof(hd->gc_left));
	if (!keep)
		unlink(hd->gc_path);
	free(hd->gc_path);
	hd->gc_path = NULL;
}

void hd_gc_area_reset(struct hd *hd, uint32_t slot)
{
	if (!hd->gcf || slot == 0 || slot >= hd->hdr->session_cap)
		return;
	area_reset(hd, slot, 1);
}

void hd_gc_area_move_pins(struct hd *hd, uint32_t from, uint32_t to)
{
	if (!hd->gcf || !from || !to || from >= hd->hdr->session_cap ||
	    to >= hd->hdr->session_cap)
		return;
	struct uh_gc_sess *f = hd_gc_sess(hd, from), *t = hd_gc_sess(hd, to);
	uint64_t hwm = __atomic_load_n(&f->pin_hwm, __ATOMIC_ACQUIRE);
	count_area(hd, from);	/* its client counts in the new area from now on */
	if (hwm > UH_GC_PIN_CAP)
		hwm = UH_GC_PIN_CAP;
	/* The slot stops being active here: its ring's unconsumed pushes go
	 * to a running cycle, as at a reap (the area itself is left as it
	 * is for a client that copies its pins from it). */
	keep_left_greys(hd, f, hd_gc_ring(hd, from));
	__atomic_store_n(&f->tail, __atomic_load_n(&f->head, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
	uint64_t *fp = hd_gc_pins(hd, from), *tp = hd_gc_pins(hd, to);
	for (uint64_t i = 0; i < hwm; i++)	/* bounded by UH_GC_PIN_CAP */
		__atomic_store_n(&tp[i], __atomic_load_n(&fp[i], __ATOMIC_RELAXED),
				 __ATOMIC_RELAXED);
	__atomic_store_n(&t->pins, __atomic_load_n(&f->pins, __ATOMIC_RELAXED),
			 __ATOMIC_RELAXED);
	__atomic_store_n(&t->pin_hwm, hwm, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}
