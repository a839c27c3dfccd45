/*
 * test_bad_heap.c -- heapd refuses bad heap files cleanly: a missing file
 * without --create, a truncated file, wrong magic, another format version
 * (with a correct checksum, so only the version is wrong), a corrupt
 * header byte (checksum mismatch), a file of random bytes, a too small
 * --size, growth words (FORMAT.md 1.1, 2.2) that disagree with the file
 * or with each other or a maximum past what one file may hold. Each must
 * make heapd exit non-zero (not by a signal) with a
 * short message naming the problem, and leave the file as it was.
 *
 * The corrupt variants are patched copies of a freshly created heap; the
 * header is found by scanning for the magic "UNIHEAP\0" at 64-byte
 * aligned offsets and checking its self_off.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format.h"
#include "harness.h"

static struct th_heapd d;
static char fresh[700];
static int ncase;	/* file names must not contain the words we look for */

static int write_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int ok;

	if (fd < 0)
		return -1;
	ok = write(fd, buf, len) == (ssize_t)len;
	close(fd);
	return ok ? 0 : -1;
}

static int contains_ci(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (; *hay; hay++)
		if (strncasecmp(hay, needle, n) == 0)
			return 1;
	return 0;
}

/* The first line of s, NUL terminated, in buf. */
static const char *first_line(const char *s, char *buf, size_t n)
{
	size_t i = 0;

	while (s[i] && s[i] != '\n' && i + 1 < n) {
		buf[i] = s[i];
		i++;
	}
	buf[i] = '\0';
	return buf;
}

/*
 * Run heapd on path with extra args; it must fail cleanly and print a
 * message containing one of the |-separated keywords.
 */
static void expect_refusal(const char *what, const char *path, const char *extra,
			   const char *keywords)
{
	static char out[16384];
	char buf[256], kw[256], line[1024], *save = NULL;
	char *argv[16];
	int n = 0, rc, found = 0;

	argv[n++] = (char *)th_bin("heapd");
	argv[n++] = "--heap";
	argv[n++] = (char *)path;
	argv[n++] = "--socket";
	argv[n++] = d.sock;
	snprintf(buf, sizeof(buf), "%s", extra ? extra : "");
	for (char *w = strtok_r(buf, " ", &save); w && n < 14; w = strtok_r(NULL, " ", &save))
		argv[n++] = w;
	argv[n] = NULL;
	rc = th_run_capture(argv, out, sizeof(out));

	/* The first line must name the problem (a usage reminder may follow
	 * for a bad option, nothing else). */
	first_line(out, line, sizeof(line));
	snprintf(kw, sizeof(kw), "%s", keywords);
	save = NULL;
	for (char *k = strtok_r(kw, "|", &save); k; k = strtok_r(NULL, "|", &save))
		found |= contains_ci(line, k);
	printf("%-22s exit %d: %s\n", what, rc, first_line(out, line, sizeof(line)));
	if (rc <= 0 || rc >= 128)
		th_fail(__FILE__, __LINE__, "%s: heapd exit %d, want 1..127 (no signal)", what, rc);
	else
		th_passed++;
	if (!found)
		th_fail(__FILE__, __LINE__, "%s: message names none of \"%s\": %s", what,
			keywords, out);
	else
		th_passed++;
	if (strstr(out, "level=") && !strstr(line, "level=error"))
		th_fail(__FILE__, __LINE__, "%s: log lines before the error:\n%s", what, out);
	else
		th_passed++;
	if (access(d.sock, F_OK) == 0)
		th_fail(__FILE__, __LINE__, "%s: heapd left its socket behind", what);
}

/* Copy the fresh heap, patch it with fix(img, hdr_off), run heapd on it. */
static void patched(const char *what, void (*fix)(char *img, size_t len, long hdr),
		    const char *keywords)
{
	char path[800];
	size_t len;
	char *img = th_read_file(fresh, &len);
	long hdr = img ? th_find_uh_header(img, len) : -1;

	if (hdr < 0) {
		th_fail(__FILE__, __LINE__, "%s: header not found in the fresh heap", what);
		free(img);
		return;
	}
	fix(img, len, hdr);
	snprintf(path, sizeof(path), "%s/case%d.uh", d.dir, ++ncase);
	if (write_file(path, img, len) != 0 ||
	    truncate(path, (off_t)((struct uh_hdr *)(img + hdr))->cur_size) != 0) {
		th_fail(__FILE__, __LINE__, "%s: write %s: %s", what, path, strerror(errno));
	} else {
		size_t len2;
		char *after;
		expect_refusal(what, path, NULL, keywords);
		/* libpmemobj's open rewrites some of its own metadata; the
		 * uniheap header must be exactly as it was. */
		after = th_read_file(path, &len2);
		TH_CHECK(after && len2 == ((struct uh_hdr *)(img + hdr))->cur_size &&
			 memcmp(after + hdr, img + hdr, sizeof(struct uh_hdr)) == 0);
		free(after);
	}
	free(img);
}

static void fix_magic(char *img, size_t len, long hdr)
{
	img[hdr + 3] = 'X';
}

static void fix_version(char *img, size_t len, long hdr)
{
	struct uh_hdr *h = (void *)(img + hdr);

	h->format_version = UH_FORMAT_VERSION + 1;
	/* Re-seal it: only the version is wrong, the checksum is right. */
	h->hdr_checksum = uh_fnv1a64(h, UH_HDR_CHECKSUM_LEN, UH_FNV_INIT);
}

static void fix_name_byte(char *img, size_t len, long hdr)
{
	struct uh_hdr *h = (void *)(img + hdr);

	h->name[0] ^= 0x20;
}

static void fix_checksum(char *img, size_t len, long hdr)
{
	struct uh_hdr *h = (void *)(img + hdr);

	h->hdr_checksum ^= 1;
}

/* The file as long as cur_size says, then heapd on it: the patched
 * copies end there, so a case that moves cur_size gets a file to match. */
static void fix_cur_past_max(char *img, size_t len, long hdr)
{
	struct uh_hdr *h = (void *)(img + hdr);

	h->cur_size = h->heap_size + (1u << 20);
}

static void fix_max_below_pool(char *img, size_t len, long hdr)
{
	struct uh_hdr *h = (void *)(img + hdr);

	h->max_size = h->heap_size - 4096;
}

static void fix_max_past_file_limit(char *img, size_t len, long hdr)
{
	struct uh_hdr *h = (void *)(img + hdr);

	h->max_size = UH_GROW_FILE_MAX + (2u << 20);
}

/* A fresh heap is its pool and does not grow (the default --max-size). */
static void check_fresh_sizes(void)
{
	size_t len;
	char *img = th_read_file(fresh, &len);
	long hdr = img ? th_find_uh_header(img, len) : -1;

	TH_CHECK(hdr >= 0);
	if (hdr >= 0) {
		const struct uh_hdr *h = (const void *)(img + hdr);
		TH_CHECK_EQ(h->heap_size, len);
		TH_CHECK_EQ(h->cur_size, len);
		TH_CHECK_EQ(h->max_size, len);
		TH_CHECK_EQ(h->chunk_map_off, 0);
	}
	free(img);
}

static void truncated(const char *what, size_t keep, const char *keywords)
{
	char path[800];
	size_t len;
	char *img = th_read_file(fresh, &len);

	snprintf(path, sizeof(path), "%s/case%d.uh", d.dir, ++ncase);
	if (!img || write_file(path, img, keep < len ? keep : len) != 0)
		th_fail(__FILE__, __LINE__, "%s: could not write %s", what, path);
	else
		expect_refusal(what, path, NULL, keywords);
	free(img);
}

static void random_file(void)
{
	char path[800];
	size_t len = 16u << 20;
	char *img = malloc(len);
	uint64_t x = 88172645463325252ull;

	for (size_t i = 0; img && i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		img[i] = (char)x;
	}
	snprintf(path, sizeof(path), "%s/rnd.uh", d.dir);
	if (!img || write_file(path, img, len) != 0)
		th_fail(__FILE__, __LINE__, "random file: could not write %s", path);
	else
		expect_refusal("random file", path, NULL, "not a uniheap heap");
	free(img);
}

int main(void)
{
	char path[800];
	size_t len;

	if (th_heapd_start(&d, NULL) != 0) {
		th_fail(__FILE__, __LINE__, "heapd did not start");
		return th_summary("test_bad_heap");
	}
	th_heapd_stop(&d);
	snprintf(fresh, sizeof(fresh), "%s", d.heap);

	snprintf(path, sizeof(path), "%s/nothere.uh", d.dir);
	expect_refusal("missing file", path, NULL, "does not exist");
	TH_CHECK(access(path, F_OK) != 0);	/* and it did not create it */

	{
		char *img = th_read_file(fresh, &len);
		free(img);
	}
	truncated("truncated half", len / 2, "truncated|damaged|corrupt");
	truncated("truncated 1M", 1u << 20, "truncated");
	truncated("empty file", 0, "truncated|not a heap|not a uniheap heap");
	patched("bad magic", fix_magic, "magic|not a uniheap heap");
	patched("format version", fix_version, "format version");
	patched("corrupt header byte", fix_name_byte, "checksum");
	patched("corrupt checksum", fix_checksum, "checksum");
	random_file();
	check_fresh_sizes();
	patched("size past maximum", fix_cur_past_max, "corrupt");
	patched("maximum below pool", fix_max_below_pool, "corrupt");
	patched("maximum past file limit", fix_max_past_file_limit, "corrupt");

	snprintf(path, sizeof(path), "%s/tiny.uh", d.dir);
	expect_refusal("too small --size", path, "--create --size 1M --durability memory",
		       "too small");
	TH_CHECK(access(path, F_OK) != 0);

	snprintf(path, sizeof(path), "%s/sz.uh", d.dir);
	expect_refusal("unparsable --size", path, "--create --size lots", "size");

	th_heapd_cleanup(&d);
	return th_summary("test_bad_heap");
}
