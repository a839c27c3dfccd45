/*
 * powerloss.c -- crash states from a persistence trace (see powerloss.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pmtrace.h"
#include "powerloss.h"

#define LINE UH_PMTRACE_LINE
#define ALL_SUBSETS_MAX 4	/* pending lines up to which every subset is tried */
#define RANDOM_SUBSETS 6	/* subsets tried beyond that */
#define MAX_PENDING 4096

void pl_mark(const void *bytes, size_t len)
{
	uh_pmtrace_write(UH_PMT_MARK, 0, bytes, len);
}

void pl_ctest_env(char **argv)
{
	if (getenv("PMEM2_FORCE_GRANULARITY"))
		return;
	setenv("PMEM2_FORCE_GRANULARITY", "CACHE_LINE", 1);
	setenv("PMEM_IS_PMEM_FORCE", "1", 1);
	execv("/proc/self/exe", argv);
}

/* ---- the trace ---- */

struct ev {
	const struct uh_pmtrace_rec *r;
	const char *data;
};

struct trace {
	char *buf;
	struct ev *ev;
	size_t n;
};

static int load_trace(const char *path, struct trace *t)
{
	size_t len, pos = 0, cap = 1024;

	t->buf = th_read_file(path, &len);
	t->ev = malloc(cap * sizeof(*t->ev));
	t->n = 0;
	if (!t->buf || !t->ev)
		return -1;
	while (pos + sizeof(struct uh_pmtrace_rec) <= len) {	/* bound: the file */
		const struct uh_pmtrace_rec *r = (const void *)(t->buf + pos);
		if (r->magic != UH_PMTRACE_MAGIC || r->len > len - pos - sizeof(*r))
			return -1;
		if (t->n == cap && !(t->ev = realloc(t->ev, (cap *= 2) * sizeof(*t->ev))))
			return -1;
		t->ev[t->n++] = (struct ev){ r, t->buf + pos + sizeof(*r) };
		pos += sizeof(*r) + r->len;
	}
	return pos == len ? 0 : -1;
}

/* ---- the shadow ---- */

struct line {
	uint64_t off;
	uint32_t tid;
	char bytes[LINE];
};

struct shadow {
	char *img;		/* durable bytes */
	size_t len;
	uint64_t version;	/* bumped whenever img changes */
	struct line *pend;	/* flushed, not yet fenced */
	size_t npend;
	char *acks;		/* marks so far */
	size_t nacks;
	uint64_t *seen;		/* hashes of the states checked */
	size_t nseen, capseen;
};

static uint64_t mix(uint64_t h, uint64_t v)
{
	return th_mix64(h ^ v) + 0x9e3779b97f4a7c15ull;
}

static uint64_t line_hash(const struct line *l)
{
	uint64_t h = mix(0, l->off);
	const uint64_t *w = (const void *)l->bytes;

	for (unsigned i = 0; i < LINE / 8; i++)
		h = mix(h, w[i]);
	return h;
}

/* A pending line that would change the shadow. */
static int line_differs(const struct shadow *s, const struct line *l)
{
	return l->off + LINE <= s->len && memcmp(s->img + l->off, l->bytes, LINE) != 0;
}

static void land(struct shadow *s, const struct line *l)
{
	if (line_differs(s, l)) {
		memcpy(s->img + l->off, l->bytes, LINE);
		s->version++;
	}
}

static void add_pending(struct shadow *s, uint32_t tid, uint64_t off, const char *data)
{
	for (size_t i = 0; i < s->npend; i++)
		if (s->pend[i].off == off && s->pend[i].tid == tid) {
			memcpy(s->pend[i].bytes, data, LINE);	/* the later flush wins */
			return;
		}
	if (s->npend == MAX_PENDING) {	/* far more than any block flushes: fence */
		land(s, &s->pend[0]);
		memmove(s->pend, s->pend + 1, (--s->npend) * sizeof(*s->pend));
	}
	s->pend[s->npend].off = off;
	s->pend[s->npend].tid = tid;
	memcpy(s->pend[s->npend].bytes, data, LINE);
	s->npend++;
}

/* Everything tid flushed becomes durable. */
static void fence(struct shadow *s, uint32_t tid)
{
	size_t k = 0;

	for (size_t i = 0; i < s->npend; i++) {
		if (s->pend[i].tid == tid)
			land(s, &s->pend[i]);
		else
			s->pend[k++] = s->pend[i];
	}
	s->npend = k;
}

/* 1 the first time a state (shadow version + landed lines) is seen. */
static int first_time(struct shadow *s, const struct line **landed, size_t n)
{
	uint64_t h = mix(0x51ed, s->version);

	for (size_t i = 0; i < n; i++)
		h = mix(h, line_hash(landed[i]));
	for (size_t i = 0; i < s->nseen; i++)
		if (s->seen[i] == h)
			return 0;
	if (s->nseen == s->capseen) {
		s->capseen = s->capseen ? s->capseen * 2 : 1024;
		s->seen = realloc(s->seen, s->capseen * sizeof(*s->seen));
		if (!s->seen)
			abort();
	}
	s->seen[s->nseen++] = h;
	return 1;
}

/* ---- checking one state ---- */

/* A state failed its checks: a test failure, or, in a campaign that
 * expects failures (a mutant), a detection (the first one printed). */
static void pl_fail(struct pl_campaign *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void pl_fail(struct pl_campaign *c, const char *fmt, ...)
{
	char msg[1 << 16];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->failures++;
	if (!c->expect_failure)
		th_fail(__FILE__, __LINE__, "%s", msg);
	else if (c->failures == 1)
		printf("%s: detected: %s\n", c->name, msg);
}

static int write_at(int fd, const void *buf, size_t len, uint64_t off)
{
	return pwrite(fd, buf, len, (off_t)off) == (ssize_t)len ? 0 : -1;
}

/* A power loss is a new boot: heapd must not take the image for the heap
 * it last served (FORMAT.md 9.4), so it is given a boot id of its own. */
static void new_boot(void)
{
	static unsigned n;
	char id[64];

	snprintf(id, sizeof(id), "powerloss-%d-%u", (int)getpid(), ++n);
	setenv("UNIHEAP_BOOT_ID", id, 1);
}

static int write_state(struct pl_campaign *c, struct shadow *s, const struct line **landed,
		       size_t n)
{
	new_boot();
	int fd = open(c->d->heap, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int rc = fd < 0 ? -1 : write_at(fd, s->img, s->len, 0);

	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = write_at(fd, landed[i]->bytes, LINE, landed[i]->off);
	if (fd >= 0)
		close(fd);
	fd = open(c->ack_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (rc == 0 && (fd < 0 || write_at(fd, s->acks, s->nacks, 0) != 0))
		rc = -1;
	if (fd >= 0)
		close(fd);
	return rc;
}

/* The counters of the last recovery line in heapd's log. */
/* The last "recovery" line of heapd's log; when it left the mark to an
 * online cycle (gc=online, FORMAT.md 9.4), live and freed are that
 * cycle's, on the "recovery_gc" line after it (the harness waited for it). */
static char *last_line(char *log, const char *event)
{
	char *p = NULL;

	for (char *q = strstr(log, event); q; q = strstr(q + 1, event))
		p = q;
	return p;
}

static int last_recovery(struct pl_campaign *c, uint64_t *live, uint64_t *freed,
			 uint64_t *nulled)
{
	size_t len;
	char *log = th_read_file(c->d->log, &len);
	char *p = log ? last_line(log, "event=recovery ") : NULL;
	char *g = log ? last_line(log, "event=recovery_gc ") : NULL;
	int rc = -1;

	if (p && strchr(p, '\n'))
		*strchr(p, '\n') = '\0';
	if (p && strstr(p, " gc=online ")) {
		if (g && g > p && strchr(g, '\n'))
			*strchr(g, '\n') = '\0';
		if (g > p && th_find_u64(g, "live", live) == 0 &&
		    th_find_u64(g, "freed", freed) == 0 && th_find_u64(p, "nulled", nulled) == 0)
			rc = 0;
	} else if (p && th_find_u64(p, "live", live) == 0 && th_find_u64(p, "freed", freed) == 0 &&
		   th_find_u64(p, "nulled", nulled) == 0) {
		rc = 0;
	}
	free(log);
	return rc;
}

static int structure_ok(struct pl_campaign *c, const char *what)
{
	uh_heap *h;
	uint64_t n = 0;
	int rc = th_connect(c->d, UH_READONLY, &h);

	if (rc == 0) {
		rc = uh_heap_check(h, &n);
		if (rc)
			pl_fail(c, "%s: uh_heap_check: %s", what, uh_errmsg());
		uh_disconnect(h);
	} else {
		pl_fail(c, "%s: connect after recovery failed", what);
	}
	return rc == 0;
}

static void check_state(struct pl_campaign *c, struct shadow *s, const struct line **landed,
			size_t n, const char *what)
{
	static char out[1 << 16];
	char *argv[16];
	uint64_t want = 0, live, freed, nulled;
	int ok = 1;

	c->states++;
	uint64_t t0 = th_now_ms();
	if (write_state(c, s, landed, n) != 0) {
		th_fail(__FILE__, __LINE__, "%s: cannot write the state: %s", what, strerror(errno));
		return;
	}
	const char *keep = getenv("UH_PL_KEEP");	/* debugging: the first failing state */
	if (keep && !c->failed) {
		struct pl_campaign k = *c;
		struct th_heapd kd = *c->d;
		snprintf(kd.heap, sizeof(kd.heap), "%s", keep);
		k.d = &kd;
		if (write_state(&k, s, landed, n) != 0)
			fprintf(stderr, "UH_PL_KEEP: cannot write %s\n", keep);
	}
	if (th_heapd_start(c->d, NULL) != 0) {
		pl_fail(c, "%s: heapd cannot recover this state", what);
		c->failed++;
		return;
	}
	uint64_t t1 = th_now_ms();
	ok = structure_ok(c, what);
	uint64_t t2 = th_now_ms();
	c->check_argv(argv);
	int rc = th_run_capture(argv, out, sizeof(out));
	uint64_t t3 = th_now_ms();
	if (rc != 0 || (c->live_key && th_find_u64(out, c->live_key, &want) != 0)) {
		pl_fail(c, "%s: checker exit %d:\n%s", what, rc, out);
		if (!c->failed && !c->expect_failure)
			th_heapd_log_tail(c->d, 3000);
		ok = 0;
	}
	th_heapd_kill(c->d);
	/* The second recovery: only when the first one repaired something
	 * (freed garbage, nulled a reference); otherwise the first one's
	 * counts are those a second would find (the checker allocates
	 * nothing), and a start is saved. */
	if (last_recovery(c, &live, &freed, &nulled) != 0) {
		pl_fail(c, "%s: no recovery line in heapd's log", what);
		ok = 0;
	} else if ((freed || nulled) && (th_heapd_start(c->d, NULL) != 0 ||
					  last_recovery(c, &live, &freed, &nulled) != 0)) {
		pl_fail(c, "%s: heapd did not start a second time", what);
		ok = 0;
	} else if (freed || nulled || (c->live_key && live != c->base_live + want)) {
		pl_fail(c, "%s: second recovery freed %llu, nulled %llu, live "
			"%llu (model %llu)", what, (unsigned long long)freed,
			(unsigned long long)nulled, (unsigned long long)live,
			(unsigned long long)(c->base_live + want));
		ok = 0;
	}
	th_heapd_kill(c->d);
	uint64_t t4 = th_now_ms();
	if (getenv("UH_PL_TIMES"))
		fprintf(stderr, "times: start %llu check %llu checker %llu restart %llu\n",
			(unsigned long long)(t1 - t0), (unsigned long long)(t2 - t1),
			(unsigned long long)(t3 - t2), (unsigned long long)(t4 - t3));
	if (ok && !c->expect_failure)
		th_passed++;
	else if (!ok)
		c->failed++;
}

/* ---- walking the trace ---- */

struct walk {
	struct pl_campaign *c;
	struct shadow s;
	uint64_t rng;
	double subset_p;	/* chance that one subset candidate is checked */
	int count_only;
	long fixed;		/* pass 1: distinct states with nothing unfenced landed */
};

static uint64_t rnd(struct walk *w)
{
	w->rng ^= w->rng << 13;
	w->rng ^= w->rng >> 7;
	w->rng ^= w->rng << 17;
	return w->rng;
}

static void state(struct walk *w, const struct line **landed, size_t n, long ev, const char *kind)
{
	char what[512];

	if (w->c->from_mark && !w->s.nacks)
		return;
	if (!first_time(&w->s, landed, n))
		return;
	if (w->count_only) {	/* distinct states: fixed ones and subset ones */
		w->c->candidates++;
		w->fixed += n == 0;
		return;
	}
	if (w->c->expect_failure && w->c->failed)
		return;
	int len = snprintf(what, sizeof(what), "%s: %s at trace event %ld (%zu lines landed",
			   w->c->name, kind, ev, n);
	for (size_t i = 0; i < n && i < 8 && len < (int)sizeof(what) - 40; i++)
		len += snprintf(what + len, sizeof(what) - (size_t)len, "%s%llu/%u", i ? " " : ": ",
				(unsigned long long)landed[i]->off, landed[i]->tid);
	snprintf(what + len, sizeof(what) - (size_t)len, ")");
	check_state(w->c, &w->s, landed, n, what);
}

/* Crash states before a fence: subsets of the lines that would change the
 * shadow. The empty and the full set are the states either side. */
static void subsets(struct walk *w, long ev)
{
	static const struct line *cand[MAX_PENDING], *pick[MAX_PENDING];
	size_t n = 0;

	for (size_t i = 0; i < w->s.npend; i++)
		if (line_differs(&w->s, &w->s.pend[i]))
			cand[n++] = &w->s.pend[i];
	if (n < 2)
		return;
	if (n <= ALL_SUBSETS_MAX) {
		for (uint32_t m = 1; m + 1 < (1u << n); m++) {
			size_t k = 0;
			for (size_t i = 0; i < n; i++)
				if (m & (1u << i))
					pick[k++] = cand[i];
			if (w->count_only || (double)(rnd(w) % 1000000) < w->subset_p * 1e6)
				state(w, pick, k, ev, "subset of unfenced lines");
		}
		return;
	}
	for (int r = 0; r < RANDOM_SUBSETS; r++) {
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			if (rnd(w) & 1)
				pick[k++] = cand[i];
		if (k && k < n &&
		    (w->count_only || (double)(rnd(w) % 1000000) < w->subset_p * 1e6))
			state(w, pick, k, ev, "random subset of unfenced lines");
	}
}

/* An msync: durable on return; during it, any subset of its pages. */
static void persist(struct walk *w, const struct ev *e, long ev)
{
	const size_t page = 4096;
	static struct line lines[MAX_PENDING];
	static const struct line *pick[MAX_PENDING];
	size_t nl = 0;

	for (uint64_t o = 0; o + LINE <= e->r->len && nl < MAX_PENDING; o += LINE) {
		lines[nl].off = e->r->off + o;
		lines[nl].tid = e->r->tid;
		memcpy(lines[nl].bytes, e->data + o, LINE);
		nl++;
	}
	if (nl > page / LINE) {
		for (int r = 0; r < RANDOM_SUBSETS; r++) {	/* page by page */
			size_t k = 0;
			for (size_t i = 0; i < nl; i += page / LINE)
				if (rnd(w) & 1)
					for (size_t j = i; j < i + page / LINE && j < nl; j++)
						pick[k++] = &lines[j];
			if (k && k < nl &&
			    (w->count_only || (double)(rnd(w) % 1000000) < w->subset_p * 1e6))
				state(w, pick, k, ev, "subset of msync pages");
		}
	}
	for (size_t i = 0; i < nl; i++)
		land(&w->s, &lines[i]);
	state(w, NULL, 0, ev, "msync");
}

/* A growth's length became durable (its fsync returned): the shadow is as
 * long, the bytes past the old end zero until a flush lands there. Before
 * this record a state keeps the old length (see powerloss.h). */
static void lengthen(struct walk *w, uint64_t len, long ev)
{
	if (len <= w->s.len)
		return;
	char *img = realloc(w->s.img, len);
	if (!img)
		abort();
	memset(img + w->s.len, 0, len - w->s.len);
	w->s.img = img;
	w->s.len = len;
	w->s.version++;
	state(w, NULL, 0, ev, "file length synced");
}

static void walk(struct walk *w, const struct trace *t)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct ev *e = &t->ev[i];
		switch (e->r->kind) {
		case UH_PMT_FLUSH:
			for (uint64_t o = 0; o + LINE <= e->r->len; o += LINE)
				add_pending(&w->s, e->r->tid, e->r->off + o, e->data + o);
			break;
		case UH_PMT_BARRIER:
			w->c->barriers += w->count_only;
			subsets(w, (long)i);
			fence(&w->s, e->r->tid);
			state(w, NULL, 0, (long)i, "barrier");
			break;
		case UH_PMT_PERSIST:
			w->c->barriers += w->count_only;
			persist(w, e, (long)i);
			break;
		case UH_PMT_LENGTH:
			lengthen(w, e->r->off, (long)i);
			break;
		case UH_PMT_MARK:
			w->s.acks = realloc(w->s.acks, w->s.nacks + e->r->len);
			memcpy(w->s.acks + w->s.nacks, e->data, e->r->len);
			w->s.nacks += e->r->len;
			break;
		}
	}
}

static int reset_shadow(struct walk *w, const char *template_path)
{
	free(w->s.img);
	free(w->s.acks);
	w->s.img = th_read_file(template_path, &w->s.len);
	w->s.acks = NULL;
	w->s.nacks = w->s.npend = 0;
	w->s.version = 0;
	w->s.nseen = 0;
	if (!w->s.pend)
		w->s.pend = malloc(MAX_PENDING * sizeof(*w->s.pend));
	return w->s.img && w->s.pend ? 0 : -1;
}

/* ---- the traced run ---- */

static int traced_run(struct pl_campaign *c, const char *trace_path)
{
	static char out[1 << 16];
	char *argv[16];
	size_t len;
	char *img = th_read_file(c->template_path, &len);
	int fd = open(c->d->heap, O_WRONLY | O_CREAT | O_TRUNC, 0600), rc = -1;

	if (!img || fd < 0 || write_at(fd, img, len, 0) != 0)
		goto out;
	unlink(trace_path);
	unlink(c->ack_path);
	setenv("UH_PMTRACE", trace_path, 1);
	setenv("UH_PMTRACE_HEAP", c->d->heap, 1);
	setenv("LD_PRELOAD", PMTRACE_LIB, 1);	/* heapd only */
	rc = th_heapd_start(c->d, NULL);
	unsetenv("LD_PRELOAD");
	if (rc == 0) {
		c->work_argv(argv);
		rc = th_run_capture(argv, out, sizeof(out));
		if (rc != 0)
			fprintf(stderr, "%s: workload exit %d:\n%s", c->name, rc, out);
		th_heapd_stop(c->d);
	}
	unsetenv("UH_PMTRACE");
	unsetenv("UH_PMTRACE_HEAP");
out:
	if (fd >= 0)
		close(fd);
	free(img);
	return rc;
}

long pl_run(struct pl_campaign *c)
{
	char trace_path[700];
	struct trace t = { 0 };
	struct walk w = { .c = c };

	snprintf(trace_path, sizeof(trace_path), "%s/pmtrace", c->d->dir);
	if (traced_run(c, trace_path) != 0 || load_trace(trace_path, &t) != 0) {
		th_fail(__FILE__, __LINE__, "%s: traced run or trace failed", c->name);
		return 0;
	}
	if (getenv("UH_PL_DUMP"))	/* debugging: the trace, one event a line */
		for (size_t i = 0; i < t.n; i++)
			fprintf(stderr, "%zu kind=%u tid=%u off=%llu len=%llu%s%.*s\n", i,
				t.ev[i].r->kind, t.ev[i].r->tid, (unsigned long long)t.ev[i].r->off,
				(unsigned long long)t.ev[i].r->len,
				t.ev[i].r->kind == UH_PMT_MARK ? " mark=" : "",
				t.ev[i].r->kind == UH_PMT_MARK ? (int)t.ev[i].r->len - 1 : 0,
				t.ev[i].data);
	/* Pass 1 counts the states; pass 2 checks every barrier state and as
	 * many subset states as the budget leaves, drawn at random. */
	w.count_only = 1;
	w.rng = c->seed | 1;
	if (reset_shadow(&w, c->template_path) != 0)
		return 0;
	walk(&w, &t);
	long extra = c->max_states - w.fixed, subsets = c->candidates - w.fixed;
	w.subset_p = extra <= 0 ? 0.0 : extra >= subsets ? 1.0 : (double)extra / (double)subsets;
	w.count_only = 0;
	w.rng = c->seed | 1;
	reset_shadow(&w, c->template_path);
	walk(&w, &t);
	printf("%s: %zu trace events, %ld barriers, %ld distinct crash states (%ld at barriers), "
	       "%ld checked, %ld failed\n", c->name, t.n, c->barriers, c->candidates, w.fixed,
	       c->states, c->failed);
	fflush(stdout);
	free(t.buf);
	free(t.ev);
	free(w.s.img);
	free(w.s.acks);
	free(w.s.pend);
	free(w.s.seen);
	return c->states;
}
