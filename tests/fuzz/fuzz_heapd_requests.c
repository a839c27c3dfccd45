/*
 * fuzz_heapd_requests.c -- libFuzzer target: heapd's request handlers,
 * the C core functions the gRPC adapter calls, fed decoded requests.
 *
 * One heap is opened at start. Each input is a sequence of requests: a
 * byte picks the handler, the bytes after it its arguments (sessions by
 * index among those attached in this input, sizes, offsets, class names
 * and field lists of any bytes). Names are passed as the adapter passes
 * them: NUL-terminated, whatever bytes they hold. Sessions attached by
 * an input are detached at its end, so inputs do not fill the heap.
 * heapd must answer every request (with an error at worst): never crash,
 * never read or write outside the heap.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"

static struct hd *hd;

struct in {
	const uint8_t *p;
	size_t n;
};

static uint64_t take(struct in *in, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes && in->n; i++, in->p++, in->n--)
		v |= (uint64_t)*in->p << (8 * i);
	return v;
}

/* A NUL-terminated string of up to max bytes taken from the input. */
static void take_str(struct in *in, char *buf, size_t max)
{
	size_t len = (size_t)take(in, 2) % (max + 1);

	if (len > in->n)
		len = in->n;
	memcpy(buf, in->p, len);
	buf[len] = '\0';
	in->p += len;
	in->n -= len;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char dir[] = "/dev/shm/uniheap-fuzz-XXXXXX", path[64], err[512];

	if (!mkdtemp(dir))
		abort();
	snprintf(path, sizeof(path), "%s/heap.uh", dir);
	struct hd_opts o = { .heap_path = path, .create = 1, .size = 64ull << 20,
			     .durability = UH_DUR_MEMORY };
	if (hd_open(&o, &hd, err, sizeof(err)) != 0) {
		fprintf(stderr, "fuzz_heapd_requests: %s\n", err);
		abort();
	}
	unlink(path);	/* the mapping stays; nothing is left behind */
	rmdir(dir);
	return 0;
}

static void register_class(struct in *in)
{
	static char name[320], fnames[64][80];
	uh_field_spec f[64];
	uint32_t n = (uint32_t)take(in, 1) % 65, id;
	int created;
	char err[512];

	take_str(in, name, 300);
	for (uint32_t i = 0; i < n; i++) {
		take_str(in, fnames[i], 70);
		f[i].name = fnames[i];
		f[i].type = (uint32_t)take(in, 1) % 12;
		f[i].ref_class = (uint32_t)take(in, 2);
	}
	hd_class_register(hd, name, f, n, &id, &created, err, sizeof(err));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	struct hd_session_info s[4];
	uint32_t ns = 0;
	char err[512], name[80];

	while (in.n) {	/* bound: every request takes at least one byte */
		uint32_t who = ns ? s[take(&in, 1) % ns].session : (uint32_t)take(&in, 2);
		struct hd_arena a;
		uint32_t id;
		switch (take(&in, 1) % 11) {
		case 0:
		{	/* a re-attach names a previous session and its token */
			int ro = (int)take(&in, 1) & 1;
			uint32_t prev = (uint32_t)take(&in, 2);
			uint64_t token = take(&in, 8);
			if (ns < 4 && hd_session_attach(hd, (uint32_t)getpid(), ro, "fuzz", prev, token,
							&s[ns], err, sizeof(err)) == 0)
				ns++;
			break;
		}
		case 1: register_class(&in); break;
		case 2: hd_arena_lease(hd, who, (uint32_t)take(&in, 4), &a, err, sizeof(err)); break;
		case 3: hd_large_lease(hd, who, take(&in, 4), &a, err, sizeof(err)); break;
		case 4: hd_arena_return(hd, who, take(&in, 8), err, sizeof(err)); break;
		case 5: hd_session_check(hd, who, take(&in, 8), err, sizeof(err)); break;
		case 6: hd_class_get(hd, (uint32_t)take(&in, 4)); break;
		case 7: take_str(&in, name, 70); hd_class_find(hd, name, &id); break;
		case 8: {
			uint64_t cursor = take(&in, 8), v;
			const char *rn;
			size_t len;
			hd_roots_next(hd, &cursor, &rn, &len, &v);
			break;
		}
		case 9: {
			struct hd_status st;
			hd_status_get(hd, &st);
			hd_reap_inherited(hd);
			break;
		}
		default:
			if (ns) {
				uint32_t i = (uint32_t)take(&in, 1) % ns;
				hd_session_detach(hd, s[i].session, (int)take(&in, 1) & 1);
				s[i] = s[--ns];
			}
		}
	}
	while (ns)
		hd_session_detach(hd, s[--ns].session, 1);
	return 0;
}
