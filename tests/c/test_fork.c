/*
 * test_fork.c -- a child forked from a connected process uses the heap:
 * its inherited handle attaches anew on first use (a new session over the
 * inherited mapping, so the parent's references stay valid), while the
 * parent's session goes on as before. Covered: a child and its parent
 * both committing on one counter; a block open at the fork (doomed in the
 * child with UH_EFORK, committed by the parent); pins of the parent
 * released in the child doing nothing; a new uh_connect in a child; many
 * children at once; a grandchild; and heapctl check finding the heap
 * sound at the end.
 *
 * Children report by exit code (0: all good; their own messages on
 * stderr) and leave with _exit: exit() would run the harness's cleanup,
 * which stops heapd. Each child has an alarm, so a hang fails the test
 * instead of blocking it.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static const char *SUITE = "test_fork";

enum { CHILD_ALARM_S = 120, MANY = 8, STEPS = 40 };

static struct th_heapd d;
static uint32_t counter_cls;
static uh_off counter;		/* one i64 field, n */

/* ---- in a child ---- */

static int child_failed(const char *what, int rc)
{
	fprintf(stderr, "%s: child %d: %s -> %d (%s): %s\n", SUITE, (int)getpid(), what, rc,
		uh_strerror(rc), uh_errmsg());
	return 1;
}

#define CHILD_RC(call)                                   \
	do {                                             \
		int rc_ = (call);                        \
		if (rc_)                                 \
			return child_failed(#call, rc_); \
	} while (0)
#define CHILD_WANT(call, want)                                                 \
	do {                                                                   \
		int rc_ = (call);                                              \
		if (rc_ != (want))                                             \
			return child_failed(#call " (want " #want ")", rc_ ? rc_ : 1); \
	} while (0)

static int add_fn(uh_heap *h, void *arg)
{
	int64_t n;
	int rc = uh_get_i64(h, counter, 0, &n);

	return rc ? rc : uh_set_i64(h, counter, 0, n + *(int64_t *)arg);
}

static int add(uh_heap *h, int64_t k)
{
	return uh_run(h, add_fn, &k, 10000);
}

/* Fork; the child runs fn(h) and _exits with its result. */
static pid_t fork_child(int (*fn)(uh_heap *h), uh_heap *h)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		alarm(CHILD_ALARM_S);
		_exit(fn(h));
	}
	TH_CHECK(pid > 0);
	return pid;
}

static int wait_child(pid_t pid)
{
	int st;
	if (pid <= 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int64_t counter_value(uh_heap *h)
{
	int64_t n = -1;
	TH_CHECK_RC(uh_get_i64(h, counter, 0, &n));
	return n;
}

/* ---- one child ---- */

static uint32_t parent_session;

static int child_basic(uh_heap *h)
{
	uh_info info;
	uh_off mine;
	int64_t n;

	/* The parent's reference, read through the inherited mapping. */
	CHILD_RC(uh_get_i64(h, counter, 0, &n));
	CHILD_RC(uh_heap_info(h, &info));
	if (info.session == parent_session)
		return child_failed("the child's session is its parent's", 0);
	CHILD_RC(add(h, 1));
	/* A block of its own: a new object, published as a root. */
	CHILD_RC(uh_begin(h));
	CHILD_RC(uh_alloc(h, counter_cls, &mine));
	CHILD_RC(uh_set_i64(h, mine, 0, 7));
	CHILD_RC(uh_root_set(h, "fork.child", mine));
	CHILD_RC(uh_commit(h));
	uh_disconnect(h);
	return 0;
}

static void test_child_and_parent(uh_heap *h)
{
	uh_info info;
	TH_CHECK_RC(uh_heap_info(h, &info));
	parent_session = info.session;
	int64_t before = counter_value(h);

	pid_t pid = fork_child(child_basic, h);
	for (int i = 0; i < STEPS; i++)		/* the parent goes on meanwhile */
		TH_CHECK_RC(add(h, 1));
	TH_CHECK_EQ(wait_child(pid), 0);
	TH_CHECK_EQ(counter_value(h), before + STEPS + 1);
	TH_CHECK_RC(uh_heap_info(h, &info));
	TH_CHECK_EQ(info.session, parent_session);

	uh_off mine = 0;
	int64_t v = 0;
	TH_CHECK_RC(uh_root_get(h, "fork.child", &mine));
	TH_CHECK_RC(uh_get_i64(h, mine, 0, &v));
	TH_CHECK_EQ(v, 7);
	TH_CHECK_RC(add(h, 1));		/* the parent's session still commits */
}

/* ---- a block open at the fork ---- */

static int64_t committed;	/* the counter before the parent's open block */

static int child_in_block(uh_heap *h)
{
	int64_t n;
	uh_off obj;

	if (uh_in_block(h) != 2)
		return child_failed("uh_in_block after fork", uh_in_block(h));
	/* The parent's block is not the child's: rolled back, still open. */
	CHILD_WANT(uh_get_i64(h, counter, 0, &n), UH_EFORK);
	CHILD_WANT(uh_commit(h), UH_EFORK);	/* inner level */
	CHILD_WANT(uh_commit(h), UH_EFORK);	/* outer level: ends it */
	if (uh_in_block(h) != 0)
		return child_failed("block still open after commit", uh_in_block(h));
	CHILD_WANT(uh_commit(h), UH_ESTATE);
	/* Outside it the handle works; the counter is the parent's, locked
	 * by its open block, so the child works on an object of its own. */
	CHILD_RC(uh_alloc(h, counter_cls, &obj));
	CHILD_RC(uh_set_i64(h, obj, 0, 3));
	CHILD_RC(uh_get_i64(h, obj, 0, &n));
	if (n != 3)
		return child_failed("read back", (int)n);
	return 0;
}

static int child_abort_block(uh_heap *h)
{
	int64_t n;

	CHILD_RC(uh_abort(h));		/* ends every level */
	if (uh_in_block(h) != 0)
		return child_failed("block still open after abort", uh_in_block(h));
	CHILD_RC(uh_begin(h));		/* a block of its own */
	CHILD_RC(uh_alloc(h, counter_cls, &(uh_off){ 0 }));
	CHILD_RC(uh_commit(h));
	/* The parent's block has not committed: the child reads the value
	 * before it. */
	CHILD_RC(uh_get_i64(h, counter, 0, &n));
	if (n != committed)
		return child_failed("read an uncommitted value", (int)n);
	return 0;
}

static void test_block_open_at_fork(uh_heap *h)
{
	int64_t before = counter_value(h);

	for (int variant = 0; variant < 2; variant++) {
		committed = before;
		TH_CHECK_RC(uh_begin(h));
		TH_CHECK_RC(uh_begin(h));
		TH_CHECK_RC(uh_set_i64(h, counter, 0, before + 100));
		pid_t pid = fork_child(variant ? child_abort_block : child_in_block, h);
		TH_CHECK_EQ(wait_child(pid), 0);
		/* The parent's block is untouched by the child. */
		TH_CHECK_EQ(uh_in_block(h), 2);
		TH_CHECK_RC(uh_commit(h));
		TH_CHECK_RC(uh_commit(h));
		TH_CHECK_EQ(counter_value(h), before + 100);
		before += 100;
	}
}

/* ---- pins ---- */

static uint32_t parent_pin;

static int child_pins(uh_heap *h)
{
	uint32_t pin;

	/* The parent's pin, held by what the child inherited: not the
	 * child's to release, so releasing it does nothing. */
	CHILD_RC(uh_unpin(h, parent_pin));
	CHILD_RC(uh_pin(h, counter, &pin));
	if (pin == parent_pin)
		return child_failed("the child's pin id is its parent's", (int)pin);
	CHILD_RC(uh_unpin(h, pin));
	CHILD_WANT(uh_unpin(h, pin), UH_EINVAL);
	return 0;
}

static void test_pins(uh_heap *h)
{
	TH_CHECK_RC(uh_pin(h, counter, &parent_pin));
	pid_t pid = fork_child(child_pins, h);
	TH_CHECK_EQ(wait_child(pid), 0);
	TH_CHECK_RC(uh_unpin(h, parent_pin));	/* still the parent's */
}

/* ---- a new connection in a child ---- */

static int child_connects(uh_heap *inherited)
{
	uh_heap *h;
	int64_t n;

	(void)inherited;
	CHILD_RC(uh_connect(d.sock, 0, &h));
	CHILD_RC(uh_get_i64(h, counter, 0, &n));
	CHILD_RC(add(h, 1));
	uh_disconnect(h);
	return 0;
}

static void test_connect_in_child(uh_heap *h)
{
	int64_t before = counter_value(h);
	TH_CHECK_EQ(wait_child(fork_child(child_connects, h)), 0);
	TH_CHECK_EQ(counter_value(h), before + 1);
}

/* ---- many children, and a grandchild ---- */

static int child_steps(uh_heap *h)
{
	for (int i = 0; i < STEPS; i++)
		CHILD_RC(add(h, 1));
	return 0;	/* no disconnect: heapd reaps the session at exit */
}

static void test_many_children(uh_heap *h)
{
	int64_t before = counter_value(h);
	pid_t pids[MANY];

	for (int i = 0; i < MANY; i++)
		pids[i] = fork_child(child_steps, h);
	for (int i = 0; i < STEPS; i++)
		TH_CHECK_RC(add(h, 1));
	for (int i = 0; i < MANY; i++)
		TH_CHECK_EQ(wait_child(pids[i]), 0);
	TH_CHECK_EQ(counter_value(h), before + (MANY + 1) * STEPS);
}

static int child_forks_again(uh_heap *h)
{
	CHILD_RC(add(h, 1));	/* the child's gRPC copy runs: a grandchild needs another */
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		alarm(CHILD_ALARM_S);
		_exit(child_steps(h));
	}
	if (pid < 0)
		return child_failed("fork", 0);
	CHILD_RC(add(h, 1));
	int rc = wait_child(pid);
	if (rc != 0)
		return child_failed("grandchild", rc);
	uh_disconnect(h);
	return 0;
}

static void test_grandchild(uh_heap *h)
{
	int64_t before = counter_value(h);
	TH_CHECK_EQ(wait_child(fork_child(child_forks_again, h)), 0);
	TH_CHECK_EQ(counter_value(h), before + 2 + STEPS);
}

int main(void)
{
	static const uh_field_spec f[] = { { "n", UH_T_I64, 0 } };
	static char out[8192];
	uh_heap *h;

	if (th_heapd_start(&d, NULL) != 0 || th_connect(&d, 0, &h) != 0) {
		TH_CHECK(!"heapd start + connect");
		return th_summary(SUITE);
	}
	TH_CHECK_RC(uh_class_register(h, "fork.Counter", f, 1, &counter_cls));
	TH_CHECK_RC(uh_alloc(h, counter_cls, &counter));
	TH_CHECK_RC(uh_root_set(h, "fork.counter", counter));

	test_child_and_parent(h);
	test_block_open_at_fork(h);
	test_pins(h);
	test_connect_in_child(h);
	test_many_children(h);
	test_grandchild(h);

	int rc = th_heapctl(&d, "check", out, sizeof(out));
	TH_CHECK_EQ(rc, 0);
	TH_CHECK(strstr(out, "ok:") != NULL);
	if (rc)
		fprintf(stderr, "%s", out);
	uh_disconnect(h);
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
