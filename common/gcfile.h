/*
 * gcfile.h -- the GC file: run-time state that clients and heapd's online
 * collector share beside the heap (FORMAT.md 9.3). It is not part of the
 * heap file and never persistent: heapd creates it when it starts (path
 * in Welcome.gc_path, by default the socket's path + ".gc"), every client
 * maps it whole (it is sparse: only touched pages use memory).
 *
 * Layout: a 4096-byte header, then one area per session slot s (1..1023)
 * at UH_GC_AREA_OFF(s): a control line (struct uh_gc_sess), the session's
 * ring of grey references (old values a commit overwrote while the
 * collector marks, and objects pinned meanwhile), then its pin table.
 *
 * Writers: each word of a session's area is written by that session's
 * client only, except `tail` (heapd: ring entries consumed). heapd zeroes
 * an area when it gives the slot to a new session and after reaping one,
 * having first added its `commits` and `conflicts` to its own totals.
 *
 * Pin table entries: 0 = never used; odd = free ((next free index + 1)
 * << 1 | 1, next 0 ending the session's private free list: references
 * are 8-aligned offsets, so never odd); else a reference (offset |
 * generation << 48) the session's proxies hold. Entry 0 is never used
 * (pin ids start at 1). The collector reads entries [0, pin_hwm); a
 * client raises pin_hwm before it stores a new entry.
 */
#ifndef UH_GCFILE_H
#define UH_GCFILE_H

#include <stdint.h>

#define UH_GC_MAGIC 0x43474855u		/* "UHGC" */
#define UH_GC_FILE_VERSION 1u
#define UH_GC_RING_CAP 8192u		/* grey references per session ring */
#define UH_GC_PIN_OFF (128u << 10)	/* pin table within an area */
/* The nursery: the last UH_GC_NURSERY objects the session allocated, in
 * a ring of references at UH_GC_NURSERY_OFF of its area (0 = empty),
 * written by the client at each allocation. The collector counts them
 * as pins, so that an object allocated (and its block committed) just
 * before a cycle cannot be swept before the binding's uh_pin of it. */
#define UH_GC_NURSERY_OFF (96u << 10)
#define UH_GC_NURSERY 64u
/* u64 at UH_GC_LOOKED_OFF of an area, written by the client: the last
 * cycle whose sweep was over when it last looked at its arenas to give
 * back those a cycle left mostly empty, if the header's space_asked says
 * so (libuniheap's leases.c; 0: never).
 * A lease that finds no space waits, after its cycle, until the sessions
 * that hold small arenas have looked (heapd's arenas.c, FORMAT.md 6.3). */
#define UH_GC_LOOKED_OFF (UH_GC_NURSERY_OFF + 8u * UH_GC_NURSERY)
/* u64 at UH_GC_CALLING_OFF of an area, written by the client: while it
 * waits in heapd for a lease (which may run GC cycles for seconds), the
 * CLOCK_MONOTONIC microsecond it began; else 0. A block of the session
 * may hold locks across that wait: a block of another session that keeps
 * losing on one of them waits for it instead of spending its tries
 * (libuniheap's starve.c, FORMAT.md 8.6). */
#define UH_GC_CALLING_OFF (UH_GC_LOOKED_OFF + 8u)
#define UH_GC_PIN_CAP (1u << 24)	/* pins per session: 16M */
#define UH_GC_AREA_SIZE ((uint64_t)UH_GC_PIN_OFF + 8ull * UH_GC_PIN_CAP)
#define UH_GC_HDR_SIZE 4096u
#define UH_GC_AREA_OFF(s) (UH_GC_HDR_SIZE + (uint64_t)(s) * UH_GC_AREA_SIZE)
#define UH_GC_FILE_SIZE(session_cap) UH_GC_AREA_OFF(session_cap)

/* uh_hdr.gc_state: bits 0..1 the phase, bits 2..63 the cycle number. */
enum { UH_GC_IDLE = 0, UH_GC_MARK = 1, UH_GC_SWEEP = 2 };
#define uh_gc_phase(state) ((uint32_t)((state) & 3u))
#define uh_gc_cycle(state) ((state) >> 2)
#define uh_gc_state_make(cycle, phase) (((uint64_t)(cycle) << 2) | (phase))
/* The last cycle whose sweep is over: the current one when IDLE, else the
 * one before (a cycle begins only after the last one's sweep ended). */
static inline uint64_t uh_gc_swept_cycle(uint64_t state)
{
	uint64_t c = uh_gc_cycle(state);
	return uh_gc_phase(state) == UH_GC_IDLE || c == 0 ? c : c - 1;
}

struct uh_gc_filehdr {
	uint32_t magic;			/* UH_GC_MAGIC */
	uint32_t version;		/* UH_GC_FILE_VERSION */
	uint32_t session_cap;		/* areas: slots 0..session_cap-1 (0 unused) */
	uint32_t ring_cap;		/* UH_GC_RING_CAP */
	uint64_t area_size;		/* UH_GC_AREA_SIZE */
	uint64_t pin_off;		/* UH_GC_PIN_OFF */
	uint64_t pin_cap;		/* UH_GC_PIN_CAP */
	uint64_t heap_dev, heap_ino;	/* the heap file this GC file serves */
	uint64_t heapd_starts;		/* uh_hdr.heapd_starts of the heapd that made it */
	/* The cycle whose mark has begun: heapd stores it once the cycle's
	 * first handshake (H1) is over, and 0 before it stores the next
	 * cycle's MARK (FORMAT.md 9.3, objects made during the mark). 0
	 * from a heapd that predates it (the word was padding): then no
	 * client ever takes an object for one made during a mark. */
	uint64_t mark_begun;
	/* Times a lease or an attach found no space and heapd ran a cycle
	 * for it (FORMAT.md 6.3): a session's first look at its arenas after
	 * this changes gives back those a cycle left mostly empty. 0 from a
	 * heapd that predates it (the word was padding): nobody gives back. */
	uint64_t space_asked;
	/* Clients: 0, or the session slot (bits 48..63) of a block that has
	 * lost many tries in a row and the CLOCK_MONOTONIC microsecond
	 * (bits 0..47) until which other sessions hold back new blocks for
	 * it (FORMAT.md 9.3, libuniheap's starve.c). Advisory. */
	uint64_t starving;
};

/* A session's control line, at the start of its area (64 bytes). */
struct uh_gc_sess {
	uint32_t busy;			/* client: nonzero while it applies or pins (9.3) */
	uint32_t overflow;		/* client: a grey reference was dropped (ring full) */
	uint64_t seen;			/* client: gc_state loaded in its last busy section */
	uint64_t head;			/* client: grey references pushed */
	uint64_t tail;			/* heapd: grey references consumed */
	uint64_t pin_hwm;		/* client: pin entries ever used */
	uint64_t pins;			/* client: pin entries holding a reference now */
	/* client: blocks this session committed that wrote, and blocks
	 * rolled back by a conflict (uh_stats' commits and conflicts of this
	 * area's session); heapd sums them for its metrics. 0 from a client
	 * that does not count (these words were reserved). */
	uint64_t commits;
	uint64_t conflicts;
};

_Static_assert(sizeof(struct uh_gc_sess) == 64, "gc session line");
_Static_assert(64 + 8ull * UH_GC_RING_CAP <= UH_GC_NURSERY_OFF, "ring fits before the nursery");
_Static_assert(UH_GC_CALLING_OFF + 8ull <= UH_GC_PIN_OFF,
	       "nursery, look and call words fit before the pins");

#endif /* UH_GCFILE_H */
