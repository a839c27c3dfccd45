/*
 * test_recovery_online.c -- heapd serving at once after a restart, its
 * recovery's mark left to an online cycle (FORMAT.md 9.4):
 *  - heapd SIGKILLed on the same boot and file: the restart says
 *    gc_mode "online"; its recovery cycle frees exactly the garbage a
 *    client left, keeps everything reachable with its content, and the
 *    heap checks sound; a client that starts working the moment heapd
 *    serves loses nothing to that cycle;
 *  - `--recovery-gc full`, and a new boot ($UNIHEAP_BOOT_ID standing in
 *    for one), take the full path and still find the same counts;
 *  - heapd SIGKILLed while its sweep holds a batch's locks: the next one
 *    releases them before it serves (only the batch's range is scanned),
 *    and nothing live is lost.
 * Automatic cycles are off (--gc-every off --gc-fill off): the counts are
 * this test's own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define SUITE "test_recovery_online"
#define LIVE 2000
#define GARBAGE 12000
#define ARGS "--gc-every off --gc-fill off"

static struct th_heapd d;
static char out[1 << 16];
static uint32_t cls;

static void register_class(uh_heap *h)
{
	static const uh_field_spec f[] = { { "v", UH_T_I64, 0 }, { "next", UH_T_REF, 0 } };
	TH_CHECK_RC(uh_class_register(h, "RecNode", f, 2, &cls));
}

struct list {
	const char *root;
	int n;
	int64_t base;
};

/* A list of n nodes v = base + i at root; its old list (if any) becomes
 * garbage. */
static int list_fn(uh_heap *h, void *arg)
{
	const struct list *l = arg;
	uh_off head = 0, n;
	int rc;
	for (int i = l->n - 1; i >= 0; i--) {
		if ((rc = uh_alloc(h, cls, &n)) || (rc = uh_set_i64(h, n, 0, l->base + i)) ||
		    (rc = uh_set_ref(h, n, 1, head)))
			return rc;
		head = n;
	}
	return uh_root_set(h, l->root, head);
}

static void make_list(uh_heap *h, const char *root, int n, int64_t base)
{
	struct list l = { root, n, base };
	TH_CHECK_RC(uh_run(h, list_fn, &l, 0));
}

static void check_list(uh_heap *h, const char *root, int n, int64_t base)
{
	uh_off cur = 0;
	int i = 0;
	TH_CHECK_RC(uh_root_get(h, root, &cur));
	for (; cur && i < n + 1; i++) {	/* bound: a list longer than n fails */
		int64_t v = 0;
		if (uh_get_i64(h, cur, 0, &v) != 0 || v != base + i) {
			th_fail(__FILE__, __LINE__, "%s[%d]: %s (v %lld, want %lld)", root, i,
				uh_errmsg(), (long long)v, (long long)(base + i));
			return;
		}
		TH_CHECK_RC(uh_get_ref(h, cur, 1, &cur));
	}
	TH_CHECK_EQ(i, n);
}

static uint64_t status_u64(const char *key)
{
	return th_status_u64(&d, key);
}

static int status_has(const char *text)
{
	TH_CHECK_EQ(th_heapctl(&d, "status --json", out, sizeof(out)), 0);
	return strstr(out, text) != NULL;
}

/* A client leaves LIVE nodes at "rec.live" and GARBAGE unreachable ones
 * (a list made and then dropped; a second call also replaces the list at
 * "rec.live"), then heapd is SIGKILLed. Returns the objects left
 * unreachable. */
static uint64_t leave_garbage(void)
{
	static int calls;
	uint64_t garbage = GARBAGE + (calls++ ? LIVE : 0);
	uh_heap *h = NULL;
	TH_CHECK_RC(th_connect(&d, 0, &h));
	if (!h)
		return 0;
	register_class(h);
	make_list(h, "rec.live", LIVE, 0);
	make_list(h, "rec.tmp", GARBAGE, 1000000);
	TH_CHECK_RC(uh_root_del(h, "rec.tmp"));
	uh_disconnect(h);
	th_heapd_kill(&d);
	return garbage;
}

static void restart(const char *extra)
{
	char args[256];
	snprintf(args, sizeof(args), "%s%s%s", ARGS, extra ? " " : "", extra ? extra : "");
	TH_CHECK_EQ(th_heapd_start(&d, args), 0);	/* waits for the recovery cycle */
}

static void check_heap(void)
{
	uh_heap *h = NULL;
	uint64_t objects = 0;
	TH_CHECK_RC(th_connect(&d, 0, &h));
	if (!h)
		return;
	check_list(h, "rec.live", LIVE, 0);
	TH_CHECK_RC(uh_heap_check(h, &objects));
	uh_disconnect(h);
}

static void test_online_after_kill(void)
{
	uint64_t garbage = leave_garbage();
	restart(NULL);
	TH_CHECK(status_has("\"gc_mode\":\"online\""));
	TH_CHECK(status_has("\"gc_pending\":false"));
	TH_CHECK_EQ(status_u64("freed_objects"), garbage);
	/* The root map and the list: what the full path counts too. */
	uint64_t live = status_u64("live_objects");
	TH_CHECK(live >= LIVE + 1);
	check_heap();
	/* A second restart finds nothing more to free, and as many alive. */
	th_heapd_kill(&d);
	restart(NULL);
	TH_CHECK_EQ(status_u64("freed_objects"), 0);
	TH_CHECK_EQ(status_u64("live_objects"), live);
}

static void test_full_paths(void)
{
	uint64_t garbage = leave_garbage();
	restart("--recovery-gc full");
	TH_CHECK(status_has("\"gc_mode\":\"full\""));
	TH_CHECK_EQ(status_u64("freed_objects"), garbage);
	check_heap();
	/* A boot the heap was not served on takes the full path by itself. */
	garbage = leave_garbage();
	setenv("UNIHEAP_BOOT_ID", "test_recovery_online-another-boot", 1);
	restart(NULL);
	unsetenv("UNIHEAP_BOOT_ID");
	TH_CHECK(status_has("\"gc_mode\":\"full\""));
	TH_CHECK_EQ(status_u64("freed_objects"), garbage);
	check_heap();
	/* Served on that boot since: the next start on it is online again. */
	th_heapd_kill(&d);
	setenv("UNIHEAP_BOOT_ID", "test_recovery_online-another-boot", 1);
	restart(NULL);
	unsetenv("UNIHEAP_BOOT_ID");
	TH_CHECK(status_has("\"gc_mode\":\"online\""));
}

/* Work from the moment heapd serves, while its recovery cycle runs: lists
 * made then, and the old one, all stay. */
static void test_clients_during_cycle(void)
{
	leave_garbage();
	d.no_recovery_wait = 1;
	restart(NULL);
	d.no_recovery_wait = 0;
	uh_heap *h = NULL;
	TH_CHECK_RC(th_connect(&d, 0, &h));
	if (!h)
		return;
	register_class(h);
	for (int k = 0; k < 20; k++) {
		char root[32];
		snprintf(root, sizeof(root), "rec.new%d", k);
		make_list(h, root, 200, k * 1000);
	}
	TH_CHECK_EQ(th_heapctl(&d, "gc --wait", out, sizeof(out)), 0);
	for (int k = 0; k < 20; k++) {
		char root[32];
		snprintf(root, sizeof(root), "rec.new%d", k);
		check_list(h, root, 200, k * 1000);
	}
	check_list(h, "rec.live", LIVE, 0);
	uint64_t objects;
	TH_CHECK_RC(uh_heap_check(h, &objects));
	uh_disconnect(h);
}

/* heapd killed with its sweep stopped holding a batch's locks: the batch's
 * objects are invalid already, their locks and bitmap bits still held. */
static void test_killed_in_sweep(void)
{
	uint64_t garbage = leave_garbage();
	setenv("UNIHEAP_GC_STOP_AT", "sweep", 1);	/* the harness does not wait */
	restart(NULL);
	unsetenv("UNIHEAP_GC_STOP_AT");
	uint64_t deadline = th_now_ms() + 30000;
	int stopped = 0;
	while (!stopped && th_now_ms() < deadline) {	/* bound: 30 s */
		size_t len;
		char *log = th_read_file(d.log, &len);
		stopped = log && strstr(log, "event=gc_stopped_at step=sweep") != NULL;
		free(log);
		th_sleep_ms(10);
	}
	TH_CHECK(stopped);
	th_heapd_kill(&d);
	restart(NULL);
	size_t len;
	char *log = th_read_file(d.log, &len);
	char *p = NULL;
	for (char *q = log ? strstr(log, "event=gc_locks_released") : NULL; q;
	     q = strstr(q + 1, "event=gc_locks_released"))	/* the last one */
		p = q;
	uint64_t released = 0;
	TH_CHECK(p != NULL && th_find_u64(p, "count", &released) == 0 && released > 0);
	free(log);
	TH_CHECK(status_has("\"gc_mode\":\"online\""));
	/* Each released lock was on garbage the stopped sweep had freed. */
	TH_CHECK_EQ(status_u64("freed_objects") + released, garbage);
	check_heap();
}

int main(void)
{
	TH_CHECK_EQ(th_heapd_start(&d, ARGS), 0);
	test_online_after_kill();
	test_full_paths();
	test_clients_during_cycle();
	test_killed_in_sweep();
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
