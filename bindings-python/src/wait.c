/*
 * wait.c -- waiting for another process's change (uniheap.h "Waiting for
 * changes"): Heap.token, Heap.wait, the Waiter that the asyncio form runs
 * in a thread and cancels, the uniheap.ROOTS sentinel, and each heap's
 * pool of wait sessions.
 *
 * A wait blocks the session it runs on, so it never runs on the user's
 * session (hp->h): it takes a wait session from the heap's pool (opened
 * with uh_session_open on first need, kept idle afterwards, at most
 * UHPY_WAIT_IDLE of them) and gives it back when it returns. The GIL is
 * released during the native wait.
 *
 * Invariants (all under the GIL but the two atomics):
 *  - hp->wslots lists every wait session of the heap; a slot is taken
 *    (inuse) by one wait at a time; s->running (atomic) is 1 exactly while
 *    the wait is inside uh_wait_any without the GIL.
 *  - close() (uhpy_waits_close) sets hp->wclosing, so the list does not
 *    change; it cancels every running wait (uh_wait_cancel) until none
 *    runs and no session is being opened (hp->wopening), then disconnects
 *    every session and sets s->h = NULL. A slot in use then belongs to its
 *    wait, which frees it when it gives it back; an idle one is freed at
 *    once.
 *  - A cancel that comes just before uh_wait_any starts is not seen by it
 *    (uniheap.h): whoever cancels repeats it until the wait has returned
 *    (close() here, the asyncio form in _wait.py); a Waiter's cancelled
 *    flag makes a wait that has not started yet return at once.
 */
#include <time.h>

#include "ext.h"

#define UHPY_WAIT_IDLE 2	/* idle wait sessions a heap keeps */

struct uhpy_wslot {
	struct uhpy_wslot *next;
	uh_heap *h;		/* the session; NULL once close() ended it */
	int inuse;		/* taken by a wait */
	int running;		/* atomic: inside uh_wait_any */
};

typedef struct {
	PyObject_HEAD
	HeapObject *heap;		/* owned */
	struct uhpy_wslot *slot;	/* the session of the wait in progress */
	int cancelled;			/* cancel() was called: no more waits */
} WaiterObject;

/* ---- the pool ---- */

/* In a forked child the pool is the parent's: its sessions (inherited
 * handles never used here) and its running waits (threads that do not
 * exist here). Forget it, as close() would end it: libuniheap frees an
 * inherited handle's memory without touching the parent's session; a
 * slot in use stays its Waiter's to free. */
static void forget_inherited(HeapObject *hp)
{
	struct uhpy_wslot *s, *next;

	if (hp->wepoch == uhpy_fork_epoch)
		return;
	for (s = hp->wslots; s; s = next) {
		next = s->next;
		uh_disconnect(s->h);
		s->h = NULL;
		s->running = 0;
		if (!s->inuse)
			PyMem_RawFree(s);
	}
	hp->wslots = NULL;
	hp->wopening = 0;
	hp->wclosing = 0;
	hp->wepoch = uhpy_fork_epoch;
}

static struct uhpy_wslot *slot_take(HeapObject *hp)
{
	struct uhpy_wslot *s;
	uh_heap *nh = NULL, *h = hp->h;
	int rc;

	forget_inherited(hp);
	if (hp->wclosing)
		return (void *)uhpy_closed();
	for (s = hp->wslots; s; s = s->next)
		if (!s->inuse && s->h) {
			s->inuse = 1;
			return s;
		}
	if (!(s = PyMem_RawCalloc(1, sizeof(*s))))
		return (void *)PyErr_NoMemory();
	/* close() waits for this to end before it disconnects h. */
	__atomic_add_fetch(&hp->wopening, 1, __ATOMIC_SEQ_CST);
	Py_BEGIN_ALLOW_THREADS
	/* Read-only: a wait writes nothing, and heapd then gives the session
	 * no log (a writing session's costs 1 MiB of heap). */
	rc = uh_session_open(h, UH_READONLY, &nh);
	__atomic_sub_fetch(&hp->wopening, 1, __ATOMIC_SEQ_CST);
	Py_END_ALLOW_THREADS
	if (rc || hp->wclosing || !hp->h) {
		PyMem_RawFree(s);
		if (rc)
			return (void *)uhpy_raise(rc, "wait session");
		Py_BEGIN_ALLOW_THREADS
		uh_disconnect(nh);
		Py_END_ALLOW_THREADS
		return (void *)uhpy_closed();
	}
	s->h = nh;
	s->inuse = 1;
	s->next = hp->wslots;
	hp->wslots = s;
	return s;
}

static void slot_give(HeapObject *hp, struct uhpy_wslot *s)
{
	struct uhpy_wslot **at;
	int idle = 0;

	s->inuse = 0;
	if (!s->h) {			/* close() ended it meanwhile */
		PyMem_RawFree(s);
		return;
	}
	if (hp->wclosing)
		return;
	for (struct uhpy_wslot *t = hp->wslots; t; t = t->next)
		idle += !t->inuse;
	if (idle <= UHPY_WAIT_IDLE)
		return;
	for (at = &hp->wslots; *at != s; at = &(*at)->next)
		;
	*at = s->next;
	uh_heap *h = s->h;
	PyMem_RawFree(s);
	Py_BEGIN_ALLOW_THREADS
	uh_disconnect(h);
	Py_END_ALLOW_THREADS
}

/* Cancel every running wait until none runs; 1 if one still did. */
static int cancel_running(HeapObject *hp)
{
	int busy = __atomic_load_n(&hp->wopening, __ATOMIC_SEQ_CST) != 0;

	for (struct uhpy_wslot *s = hp->wslots; s; s = s->next)
		if (__atomic_load_n(&s->running, __ATOMIC_SEQ_CST)) {
			busy = 1;
			uh_wait_cancel(s->h);
		}
	return busy;
}

void uhpy_waits_close(HeapObject *hp)
{
	struct uhpy_wslot *s, *next;
	const struct timespec ms = { 0, 1000000 };

	forget_inherited(hp);
	if (!hp->wslots && !__atomic_load_n(&hp->wopening, __ATOMIC_SEQ_CST))
		return;
	hp->wclosing = 1;
	Py_BEGIN_ALLOW_THREADS
	while (cancel_running(hp))
		nanosleep(&ms, NULL);
	Py_END_ALLOW_THREADS
	for (s = hp->wslots; s; s = next) {
		next = s->next;
		uh_heap *h = s->h;
		int inuse = s->inuse;	/* read before the GIL is let go */
		s->h = NULL;
		if (!inuse)
			PyMem_RawFree(s);
		if (h) {
			Py_BEGIN_ALLOW_THREADS
			uh_disconnect(h);
			Py_END_ALLOW_THREADS
		}
	}
	hp->wslots = NULL;
	hp->wclosing = 0;
}

PyObject *uhpy_heap_wait_pool(HeapObject *hp, PyObject *unused)
{
	int n = 0, idle = 0;

	(void)unused;
	for (struct uhpy_wslot *s = hp->wslots; s; s = s->next) {
		n++;
		idle += !s->inuse;
	}
	return Py_BuildValue("(ii)", n, idle);
}

/* ---- arguments ---- */

/* obj (a proxy of hp, or ROOTS) as the reference to wait on. */
static int wait_ref(HeapObject *hp, PyObject *obj, uh_off *ref)
{
	int rc;

	if (obj == uhpy_st->roots) {
		*ref = UH_WAIT_ROOTS;
		return 0;
	}
	if ((rc = uhpy_same_heap(hp, obj, ref)) == 0)
		PyErr_Format(PyExc_TypeError, "waits take a persistent object or uniheap.ROOTS, "
			     "not %.80s", Py_TYPE(obj)->tp_name);
	return rc == 1 ? 0 : -1;
}

/* The objects of obj: one, or a list/tuple of 1..UH_WAIT_MAX (*many). */
static int wait_refs(HeapObject *hp, PyObject *obj, uh_off *refs, uint32_t *n, int *many)
{
	*many = PyList_Check(obj) || PyTuple_Check(obj);
	if (!*many) {
		*n = 1;
		return wait_ref(hp, obj, refs);
	}
	Py_ssize_t len = PySequence_Fast_GET_SIZE(obj);
	if (len < 1 || len > (Py_ssize_t)UH_WAIT_MAX) {
		PyErr_Format(PyExc_ValueError, "wait on 1 to %u objects at once, not %zd",
			     UH_WAIT_MAX, len);
		return -1;
	}
	for (Py_ssize_t i = 0; i < len; i++)
		if (wait_ref(hp, PySequence_Fast_GET_ITEM(obj, i), &refs[i]) < 0)
			return -1;
	*n = (uint32_t)len;
	return 0;
}

static int wait_since(PyObject *since, int many, uint32_t n, uint64_t *out)
{
	if (!many) {
		out[0] = PyLong_AsUnsignedLongLong(since);
		return out[0] == (uint64_t)-1 && PyErr_Occurred() ? -1 : 0;
	}
	if (!(PyList_Check(since) || PyTuple_Check(since)) ||
	    PySequence_Fast_GET_SIZE(since) != (Py_ssize_t)n) {
		PyErr_Format(PyExc_TypeError, "since must be None or a list of %u tokens", n);
		return -1;
	}
	for (uint32_t i = 0; i < n; i++) {
		out[i] = PyLong_AsUnsignedLongLong(PySequence_Fast_GET_ITEM(since, i));
		if (out[i] == (uint64_t)-1 && PyErr_Occurred())
			return -1;
	}
	return 0;
}

/* timeout in seconds (None: none) as uh_wait's nanoseconds (< 0: none). */
static int wait_timeout(PyObject *timeout, int64_t *ns)
{
	if (timeout == Py_None) {
		*ns = -1;
		return 0;
	}
	double t = PyFloat_AsDouble(timeout);
	if (t == -1.0 && PyErr_Occurred())
		return -1;
	if (!(t >= 0)) {
		PyErr_SetString(PyExc_ValueError, "timeout must be >= 0 seconds, or None");
		return -1;
	}
	*ns = t >= 9e9 ? INT64_MAX : (int64_t)(t * 1e9);
	return 0;
}

/* 0 if hp can be waited on by this thread: open, of this process, and no
 * block of this thread open (a wait sees no change inside one: libuniheap
 * says so, asked on the block's own session). A block of another thread
 * is no reason not to wait: the wait does not use the block's session. */
static int wait_usable(HeapObject *hp)
{
	uint64_t now;

	if (!hp->h)
		return uhpy_heap_usable(hp);
	if (hp->epoch != uhpy_fork_epoch && uhpy_heap_adopt(hp) < 0)
		return -1;
	if (hp->block_thread == PyThread_get_thread_ident()) {
		int rc = uh_wait(hp->h, UH_WAIT_ROOTS, 0, 0, &now);
		uhpy_raise(rc < 0 ? rc : UH_ESTATE, "wait");
		return -1;
	}
	return 0;
}

/* ---- the wait ---- */

static PyObject *tokens(const uint64_t *t, uint32_t n, int many)
{
	if (!many)
		return PyLong_FromUnsignedLongLong(t[0]);
	PyObject *out = PyList_New(n);
	for (uint32_t i = 0; out && i < n; i++) {
		PyObject *v = PyLong_FromUnsignedLongLong(t[i]);
		if (!v)
			Py_CLEAR(out);
		else
			PyList_SET_ITEM(out, i, v);
	}
	return out;
}

/* One wait on a wait session; w (may be NULL) can cancel it. */
static PyObject *wait_run(HeapObject *hp, WaiterObject *w, PyObject *obj, PyObject *since_o,
			  PyObject *timeout_o)
{
	uh_off refs[UH_WAIT_MAX];
	uint64_t since[UH_WAIT_MAX], now[UH_WAIT_MAX];
	uint32_t n;
	int64_t timeout;
	int many, rc = 0;

	if (wait_refs(hp, obj, refs, &n, &many) < 0 || wait_timeout(timeout_o, &timeout) < 0 ||
	    (since_o != Py_None && wait_since(since_o, many, n, since) < 0) ||
	    wait_usable(hp) < 0)
		return NULL;
	struct uhpy_wslot *s = slot_take(hp);
	if (!s)
		return NULL;
	for (uint32_t i = 0; since_o == Py_None && i < n && !rc; i++)
		rc = uh_change_token(s->h, refs[i], &since[i]);
	if (rc || (w && w->cancelled)) {
		slot_give(hp, s);
		if (rc)
			return uhpy_raise(rc, "wait");
		Py_RETURN_NONE;
	}
	if (w)
		w->slot = s;
	__atomic_store_n(&s->running, 1, __ATOMIC_SEQ_CST);
	Py_BEGIN_ALLOW_THREADS
	rc = uh_wait_any(s->h, n, refs, since, timeout, now);
	__atomic_store_n(&s->running, 0, __ATOMIC_SEQ_CST);
	Py_END_ALLOW_THREADS
	if (w)
		w->slot = NULL;
	slot_give(hp, s);
	if (rc < 0)
		return uhpy_raise(rc, "wait");
	if (rc == 0 && (!hp->h || hp->wclosing))
		return uhpy_closed();	/* close() ended the wait */
	if (rc == 0)
		Py_RETURN_NONE;
	return tokens(now, n, many);
}

static int wait_args(PyObject *args, PyObject *kw, PyObject **obj, PyObject **since,
		     PyObject **timeout)
{
	static char *kwlist[] = { "obj", "since", "timeout", NULL };

	*since = *timeout = Py_None;
	return PyArg_ParseTupleAndKeywords(args, kw, "O|OO:wait", kwlist, obj, since, timeout);
}

PyObject *uhpy_heap_wait(HeapObject *hp, PyObject *args, PyObject *kw)
{
	PyObject *obj, *since, *timeout;

	if (!wait_args(args, kw, &obj, &since, &timeout))
		return NULL;
	return wait_run(hp, NULL, obj, since, timeout);
}

PyObject *uhpy_heap_token(HeapObject *hp, PyObject *obj)
{
	uint64_t t;
	uh_off ref;
	int rc;

	UHPY_USABLE(hp);
	if (wait_ref(hp, obj, &ref) < 0)
		return NULL;
	if ((rc = uh_change_token(hp->h, ref, &t)) != 0)
		return uhpy_raise(rc, "token");
	return PyLong_FromUnsignedLongLong(t);
}

/* ---- the Waiter: one cancellable wait at a time ---- */

static PyObject *waiter_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	PyObject *heap;

	if (!PyArg_ParseTuple(args, "O!:Waiter", uhpy_st->heap_type, &heap))
		return NULL;
	/* Made in the thread that awaits: a block open there forbids it. */
	if (wait_usable((HeapObject *)heap) < 0)
		return NULL;
	(void)kw;
	WaiterObject *w = (WaiterObject *)type->tp_alloc(type, 0);
	if (w)
		w->heap = (HeapObject *)Py_NewRef(heap);
	return (PyObject *)w;
}

static int waiter_traverse(WaiterObject *w, visitproc visit, void *arg)
{
	Py_VISIT(Py_TYPE(w));
	Py_VISIT(w->heap);
	return 0;
}

static int waiter_clear(WaiterObject *w)
{
	Py_CLEAR(w->heap);
	return 0;
}

static void waiter_dealloc(WaiterObject *w)
{
	PyTypeObject *tp = Py_TYPE(w);

	PyObject_GC_UnTrack(w);
	waiter_clear(w);
	tp->tp_free(w);
	Py_DECREF(tp);
}

static PyObject *waiter_wait(WaiterObject *w, PyObject *args, PyObject *kw)
{
	PyObject *obj, *since, *timeout;

	if (!wait_args(args, kw, &obj, &since, &timeout))
		return NULL;
	return wait_run(w->heap, w, obj, since, timeout);
}

/* Any thread: this wait, and every later one of w, returns None now.
 * True while the wait still runs: a cancel just before it began is
 * missed, so the caller repeats it until False. */
static PyObject *waiter_cancel(WaiterObject *w, PyObject *unused)
{
	(void)unused;
	w->cancelled = 1;
	if (w->slot && w->slot->h)
		uh_wait_cancel(w->slot->h);
	return PyBool_FromLong(w->slot != NULL);
}

static PyMethodDef waiter_methods[] = {
	{ "wait", (PyCFunction)(void (*)(void))waiter_wait, METH_VARARGS | METH_KEYWORDS,
	  "wait(obj, since=None, timeout=None): Heap.wait on the heap's wait sessions; "
	  "None at once after cancel()." },
	{ "cancel", (PyCFunction)waiter_cancel, METH_NOARGS,
	  "End the wait in progress (and every later one); True while it still runs." },
	{ NULL, NULL, 0, NULL },
};

static PyType_Slot waiter_slots[] = {
	{ Py_tp_doc, "Waiter(heap): a cancellable wait (the asyncio form runs it in a thread)." },
	{ Py_tp_new, waiter_new },
	{ Py_tp_dealloc, waiter_dealloc },
	{ Py_tp_traverse, waiter_traverse },
	{ Py_tp_clear, waiter_clear },
	{ Py_tp_methods, waiter_methods },
	{ 0, NULL },
};

PyType_Spec uhpy_waiter_spec = {
	.name = "uniheap._uniheap.Waiter",
	.basicsize = sizeof(WaiterObject),
	.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
	.slots = waiter_slots,
};

/* ---- ROOTS ---- */

static PyObject *roots_repr(PyObject *self)
{
	(void)self;
	return PyUnicode_FromString("uniheap.ROOTS");
}

static PyType_Slot roots_slots[] = {
	{ Py_tp_doc, "uniheap.ROOTS: wait on the roots (any root set or removed)." },
	{ Py_tp_repr, roots_repr },
	{ 0, NULL },
};

static PyType_Spec roots_spec = {
	.name = "uniheap._uniheap.RootsSentinel",
	.basicsize = sizeof(PyObject),
	.flags = Py_TPFLAGS_DEFAULT,
	.slots = roots_slots,
};

int uhpy_wait_init(PyObject *m, uhpy_state *st)
{
	PyObject *t = PyType_FromModuleAndSpec(m, &roots_spec, NULL);

	if (!t)
		return -1;
	st->roots = PyObject_CallNoArgs(t);
	Py_DECREF(t);
	if (!st->roots || PyModule_AddObjectRef(m, "ROOTS", st->roots) < 0)
		return -1;
	return 0;
}
