/*
 * fuzz_heap_header.c -- libFuzzer target: the checks heapd makes before
 * it trusts a heap file (uniheap header, class table and descriptors,
 * arena directory and headers, root map), through its real open path.
 *
 * At start a heap is made with a few user classes and arenas; its bytes
 * are the template. An input is a list of patches, each
 *   region (1 byte) | offset in the region (2) | length (1) | bytes,
 * on the uniheap header, the class table, a class descriptor, the arena
 * directory, an arena header or the root map. Unless the input's first
 * byte is odd, the header checksum is sealed again after patching, so
 * the checks after it are reached. The patched heap is opened with
 * hd_open (probe, libpmemobj, header checks, recovery and GC), its roots,
 * classes and status read, and closed: an error at worst, never a crash.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"

static char path[64];
static char *tmpl;
static size_t tmpl_len;
static uint64_t hdr_off;

enum { R_HEADER, R_CLASS_TAB, R_DESC, R_ARENA_DIR, R_ARENA_HDR, R_ROOTMAP, R_COUNT };

static void make_template(void)
{
	static const uh_field_spec f[] = { { "a", UH_T_I64, 0 }, { "r", UH_T_REF, 0 },
					   { "s", UH_T_STRING, 0 } };
	struct hd_opts o = { .heap_path = path, .create = 1, .size = 16ull << 20,
			     .durability = UH_DUR_MEMORY };
	struct hd_session_info si;
	struct hd_arena a;
	struct hd *hd;
	uint32_t id;
	int created;
	char err[512];

	if (hd_open(&o, &hd, err, sizeof(err)) != 0 ||
	    hd_class_register(hd, "Fuzz", f, 3, &id, &created, err, sizeof(err)) != 0 ||
	    hd_session_attach(hd, (uint32_t)getpid(), 0, "fuzz", 0, 0, &si, err, sizeof(err)) != 0 ||
	    hd_arena_lease(hd, si.session, 64, &a, err, sizeof(err)) != 0 ||
	    hd_large_lease(hd, si.session, 30000, &a, err, sizeof(err)) != 0) {
		fprintf(stderr, "fuzz_heap_header: template: %s\n", err);
		abort();
	}
	hdr_off = hd_header_off(hd);
	hd_session_detach(hd, si.session, 1);	/* else recovery would defer its GC */
	hd_close(hd);
	int fd = open(path, O_RDONLY);
	tmpl_len = (size_t)lseek(fd, 0, SEEK_END);
	tmpl = malloc(tmpl_len);
	if (fd < 0 || !tmpl || pread(fd, tmpl, tmpl_len, 0) != (ssize_t)tmpl_len)
		abort();
	close(fd);
}

static char dir[] = "/dev/shm/uniheap-fuzz-XXXXXX";

/* Every run rewrites the heap file at path: it goes when the fuzzer exits. */
static void remove_heap(void)
{
	unlink(path);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	if (!mkdtemp(dir))
		abort();
	snprintf(path, sizeof(path), "%s/heap.uh", dir);
	atexit(remove_heap);
	make_template();
	return 0;
}

static uint64_t u64_at(const char *img, uint64_t off)
{
	uint64_t v = 0;

	if (off <= tmpl_len - 8)
		memcpy(&v, img + off, 8);
	return v;
}

/* Start and size of region r in the template. */
static void region(int r, uint64_t *start, uint64_t *len)
{
	const struct uh_hdr *h = (const void *)(tmpl + hdr_off);
	uint64_t dir = h->arena_dir_off;

	*len = 512;
	switch (r) {
	case R_HEADER: *start = hdr_off; *len = UH_HDR_SIZE; break;
	case R_CLASS_TAB: *start = h->class_tab_off; break;
	case R_DESC: *start = u64_at(tmpl, h->class_tab_off + 8ull * UH_CLASS_FIRST_USER); break;
	case R_ARENA_DIR: *start = dir; break;
	case R_ARENA_HDR: *start = u64_at(tmpl, dir + 32ull * (h->arena_count - 1)); break;
	default: *start = h->rootmap_off; *len = 64; break;
	}
	if (*start >= tmpl_len || *len > tmpl_len - *start)
		*start = *len = 0;
}

static void patch(char *img, const uint8_t *data, size_t size)
{
	size_t i = 1;

	while (i + 4 <= size) {	/* bound: each patch consumes at least 4 bytes */
		uint64_t start, len;
		region(data[i] % R_COUNT, &start, &len);
		uint64_t off = (uint64_t)(data[i + 1] | data[i + 2] << 8);
		size_t n = data[i + 3];
		i += 4;
		if (n > size - i)
			n = size - i;
		for (size_t k = 0; k < n && len; k++)
			img[start + (off + k) % len] = (char)data[i + k];
		i += n;
	}
	if (size == 0 || !(data[0] & 1)) {
		struct uh_hdr *h = (struct uh_hdr *)(img + hdr_off);
		h->hdr_checksum = uh_fnv1a64(h, UH_HDR_CHECKSUM_LEN, UH_FNV_INIT);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *img = malloc(tmpl_len), err[512];
	struct hd_opts o = { .heap_path = path };
	struct hd *hd;

	if (!img)
		return 0;
	memcpy(img, tmpl, tmpl_len);
	patch(img, data, size);
	int fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0 || pwrite(fd, img, tmpl_len, 0) != (ssize_t)tmpl_len)
		abort();
	close(fd);
	free(img);
	if (hd_open(&o, &hd, err, sizeof(err)) != 0)
		return 0;
	uint64_t cursor = 0, v;
	const char *name;
	size_t len;
	for (int i = 0; i < 1000 && hd_roots_next(hd, &cursor, &name, &len, &v) == 0; i++)
		;
	for (uint32_t id = 0; id < 64; id++)
		hd_class_get(hd, id);
	struct hd_status st;
	hd_status_get(hd, &st);
	hd_close(hd);
	return 0;
}
