/*
 * uniheap-check -- connect read-only and run uh_heap_check(): every object
 * reachable from the roots valid, every reference of the right class,
 * every map and sorted map structurally sound. `heapctl check` runs this.
 *
 *   uniheap-check [--socket PATH] [--json]
 *
 * Exit: 0 sound, 1 a problem found (printed), 2 heapd unreachable or the
 * heap could not be mapped, 64 usage error.
 */
#include <stdio.h>
#include <string.h>

#include "uniheap.h"

static int usage(const char *why)
{
	fprintf(stderr, "uniheap-check: %s\nusage: uniheap-check [--socket PATH] [--json]\n", why);
	return 64;
}

/* s as a JSON string body (quotes and control characters escaped). */
static void json_str(const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
}

int main(int argc, char **argv)
{
	const char *sock = NULL;
	int json = 0;
	uh_heap *h;
	uint64_t n = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (!strcmp(argv[i], "--socket") && i + 1 < argc)
			sock = argv[++i];
		else if (!strcmp(argv[i], "--help"))
			return usage("check the heap a heapd serves"), 0;
		else
			return usage("unknown argument");
	}
	int rc = uh_connect(sock, UH_READONLY, &h);
	if (rc) {
		fprintf(stderr, "uniheap-check: %s\n", uh_errmsg());
		return 2;
	}
	rc = uh_heap_check(h, &n);
	if (json) {
		printf("{\"ok\": %s, \"objects\": %llu, \"problem\": \"", rc ? "false" : "true",
		       (unsigned long long)n);
		json_str(rc ? uh_errmsg() : "");
		printf("\"}\n");
	} else if (rc) {
		printf("PROBLEM after %llu objects: %s\n", (unsigned long long)n, uh_errmsg());
	} else {
		printf("ok: %llu objects reachable from the roots, all valid, every map and "
		       "sorted map sound\n", (unsigned long long)n);
	}
	uh_disconnect(h);
	return rc ? 1 : 0;
}
