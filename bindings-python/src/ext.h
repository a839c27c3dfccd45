/*
 * ext.h -- shared declarations of the _uniheap extension module.
 *
 * Ownership: a Proxy owns a reference to its Heap; a Heap owns its
 * uh_heap handle (NULL once closed) and its class cache. Proxies never
 * own heap memory: they hold a reference (offset and generation, uniheap.h
 * "direct") and re-check the object's header on every access, so a closed
 * heap or a freed object raises instead of touching unmapped memory or a
 * newer object in the same slot. Each proxy (and zero-copy view) holds a
 * GC pin of its object from its making to its dealloc (pin.c), so the
 * online collector keeps every object Python code can still reach.
 *
 * Layers. A file uses only files of the layers below its own (checked by
 * scripts/cycles.py, which lists every file-level circle); the
 * declarations below come bottom first:
 *
 *   module.c    the module: registers the types, the fork guard     (top)
 *   heap.c      the Heap type: connect, close, classes, alloc, roots
 *   wait.c      waiting for changes: token, wait, the Waiter, ROOTS and
 *               the heap's pool of wait sessions
 *   map.c seq.c
 *               the proxy types of maps, lists and arrays
 *   maprecord.c records as map values: get_fields, set_field,
 *               scan_fields, put_record, one C call per record
 *   field.c     the Field descriptor of persistent classes
 *   mapiter.c   map iterators and range scans
 *   mapread.c   one key of a map: kind, conversion, lookup, read
 *   value.c view.c
 *               Python <-> uh_value/uh_key and one-step stores;
 *               zero-copy views of bytes values
 *   proxy.c     the Proxy base type and the wrapping of references
 *   block.c strings.c pin.c
 *               steps and atomic blocks; str/bytes values copied out of
 *               the mapping; the GC pins of proxies and views
 *   session.c   when a Heap can be used and when its session ends
 *   errors.c    the error classes and the functions that raise them
 *   state.c     the module state and the fork epoch                 (bottom)
 *
 * Only module.c sees every type spec and nothing uses module.c; only
 * module.c uses heap.c (its type spec).
 */
#ifndef UNIHEAP_PY_EXT_H
#define UNIHEAP_PY_EXT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <uniheap.h>

/* Object header, as schemas/FORMAT.md ("Objects") specifies it. Field
 * reads outside a block go straight to the mapping through it. */
struct uhpy_objhdr {
	uint64_t lock;
	uint32_t class_word;	/* class id | generation << 16 */
	uint32_t size;		/* UH_OBJ_VALID | payload bytes */
};

/* The header of the object reference ref names (its offset bits only). */
static inline const struct uhpy_objhdr *uhpy_hdr(const char *base, uh_off ref)
{
	return (const void *)(base + UH_REF_OFFSET(ref));
}

/* Nonzero while the object ref was made for is still there, of class cls:
 * the class/generation word and the valid bit, read as one 64-bit load
 * (little-endian: the word is the low half). A freed slot reused for a new
 * object has another generation, so a stale reference fails here. */
static inline int uhpy_live(const char *base, uh_off ref, uint32_t cls)
{
	const uint64_t *at = (const void *)(base + UH_REF_OFFSET(ref) + UH_OBJ_WORD_AT);
	const uint64_t mask = (uint64_t)UH_OBJ_VALID << 32 | 0xffffffffu;
	uint64_t want = (uint64_t)UH_OBJ_VALID << 32 | UH_OBJ_CLASS_WORD(cls, UH_REF_GEN(ref));
	return (__atomic_load_n(at, __ATOMIC_ACQUIRE) & mask) == want;
}

typedef struct {
	PyTypeObject *heap_type;
	PyTypeObject *proxy_type;
	PyTypeObject *field_type;
	PyTypeObject *atomic_type;
	PyTypeObject *map_type;
	PyTypeObject *list_type;
	PyTypeObject *array_type;
	PyTypeObject *iter_type;
	PyTypeObject *view_type;
	PyObject *error;		/* uniheap.Error */
	PyObject *by_code[-UH_LAST_ERRCODE + 1];	/* error code -> class */
	PyObject *closed_error;		/* HeapClosedError */
	PyTypeObject *waiter_type;
	PyObject *roots;		/* uniheap.ROOTS: wait on the roots */
} uhpy_state;

struct uhpy_wslot;

/* A GC pin (uh_pin) and the connection of the Heap it was taken on
 * (pin.c). id 0: nothing to release. */
typedef struct {
	uint32_t id;
	uint32_t conn;
} uhpy_pin;

typedef struct HeapObject {
	PyObject_HEAD
	uh_heap *h;		/* owned; NULL once closed */
	uint32_t conn;		/* connections made by this Heap: names its session */
	char *base;		/* the mapping (owned by h) */
	uint64_t size;		/* bytes mapped */
	unsigned epoch;		/* uhpy_fork_epoch when connected or, in a forked
				 * child, when its session attached anew */
	int readonly;
	int rollback_only;	/* a nested atomic() level ended by an exception */
	unsigned max_tries;	/* of atomic(fn): 0 = libuniheap's default */
	unsigned long block_thread;	/* thread running the open block, 0 if none */
	PyObject *types;	/* owned dict: class id -> proxy type */
	PyObject *atomic;	/* owned: the reusable atomic() context */
	PyObject *dict;		/* owned: attributes of Python subclasses */
	PyObject *weakrefs;
	Py_ssize_t exports;	/* buffers of zero-copy views exported (view.c) */
	uh_heap *parked;	/* closed while views were exported: disconnected
				 * when the last one is released */
	struct uhpy_wslot *wslots;	/* owned: the wait sessions (wait.c) */
	int wopening;		/* atomic: wait sessions being opened */
	int wclosing;		/* close() is ending the wait sessions */
	unsigned wepoch;	/* uhpy_fork_epoch of the wait sessions: in a
				 * forked child they are the parent's (wait.c) */
	/* maprecord.c's caches, owned, NULL when empty. The last record
	 * class decoded from a payload copy: its proxy type, its
	 * __uniheap_fields__ and a dict of its field names (values None)
	 * that each record's dict is copied from (valid while the heap's
	 * proxy type of the class id is dec_type). The last class stored by
	 * put_record (put_cls, id put_cid; an id never changes) and its
	 * __uniheap_fields__. */
	PyObject *dec_type, *dec_fields, *dec_template;
	PyObject *put_cls, *put_fields;
	uint32_t put_cid;
} HeapObject;

typedef struct {
	PyObject_HEAD
	HeapObject *heap;	/* owned */
	uh_off off;		/* the reference: offset and generation */
	uint32_t cls;
	uint32_t key_kind;	/* maps: cached key kind (fixed at creation), 0 = unknown */
	uhpy_pin pin;		/* the object's GC pin, released in tp_dealloc */
} ProxyObject;

/* state.c */
/* The module state: one per process (set by the module's exec slot). */
extern uhpy_state *uhpy_st;
/* Bumped in a forked child: every heap opened before the fork attaches
 * anew on its first use there (session.c). */
extern unsigned uhpy_fork_epoch;

/* errors.c: the classes (module exec), then the raising functions, each
 * returning NULL. */
int uhpy_errors_init(PyObject *m, uhpy_state *st);
PyObject *uhpy_raise(int rc, const char *what);
PyObject *uhpy_closed(void);		/* HeapClosedError */
PyObject *uhpy_freed(uh_off ref);	/* FreedObjectError */

/* session.c */
/* 0 if the heap can be used (open, no block of another thread open; in
 * a forked child, its session attached anew); else -1 with an exception. */
int uhpy_heap_usable(HeapObject *hp);
/* In a forked child, hp (open, opened by an ancestor) attaches anew: a new
 * session (libuniheap's uh_fork_attach), pins of the parent's session no
 * longer released, a block of a thread that is not in the child aborted.
 * 0, or -1 with an exception. */
int uhpy_heap_adopt(HeapObject *hp);
/* close(): the heap is closed at once; its session ends now, or when the
 * last exported view is released (uhpy_heap_export_end). */
void uhpy_heap_disconnect(HeapObject *hp);
/* hp->size := the bytes libuniheap has mapped now: a reference check past
 * them maps what a grown heap has added (FORMAT.md 1.1), and direct reads
 * may then reach that part too. */
void uhpy_heap_mapped(HeapObject *hp);
/* A view's buffer was released: the last one of a closed heap ends its
 * session. */
void uhpy_heap_export_end(HeapObject *hp);
/* Return NULL from the calling method unless hp can be used. */
#define UHPY_USABLE(hp)                       \
	do {                                  \
		if (uhpy_heap_usable(hp) < 0) \
			return NULL;          \
	} while (0)

/* block.c */
extern PyType_Spec uhpy_atomic_spec;
/* A block around a step that allocates and publishes (joins an open one). */
int uhpy_step_begin(HeapObject *hp, int *outer);
int uhpy_step_end(HeapObject *hp, int outer, int rc);
/* Heap.atomic(): the reusable context, or atomic(fn, *args, **kw). */
PyObject *uhpy_heap_atomic(HeapObject *hp, PyObject *args, PyObject *kw);

/* strings.c: str/bytes values copied from the mapping with
 * uh_copy_values (uniheap.h): fetch(h, arg, vals, n) reads where the
 * values are kept, again on every try (at most UH_READ_TRIES).
 * uhpy_copy_values returns 0 with objs[i] the copy (a new reference) of
 * each str/bytes value i among vals[0, cap), NULL for the others;
 * UHPY_RAISED with an exception (a copy failed, e.g. on bytes that are not
 * UTF-8, or fetch raised one and said so); else fetch's own code or
 * libuniheap's, with no exception and no copies.
 * Its first try is made here, inline, where the compiler sees fetch: the
 * values are seldom replaced under the copy, and a check by the header
 * alone (uhpy_live) costs less than libuniheap's, which finds the
 * object's arena first. uhpy_copy_in_place: 0, every copy made and
 * checked; UHPY_RAISED; or -1, a value is not as the header check wants
 * it: uhpy_copy_checked then runs uh_copy_values from those values (its
 * first try's, the fetched), to say why or to read them again.
 * Inline values (UH_T_ISTRING, UH_T_IBYTES: in a hash map's entry) are
 * left to uh_copy_values, which checks where in its entry a value may
 * lie (the map's layout).
 * uhpy_value_copy is for a str/bytes value of any of the four types that
 * stays put (replaced there means freed: FreedObjectError), e.g. the old
 * value a remove returned inside its step; uhpy_string_at for a str/bytes
 * object's reference. */
#define UHPY_RAISED 1
int uhpy_copy_in_place(HeapObject *hp, const uh_value *vals, uint32_t n, PyObject **objs);
int uhpy_copy_checked(HeapObject *hp, uh_values_fetch_fn fetch, void *arg, uh_value *vals,
		      PyObject **objs, uint32_t cap, uint32_t fetched);
static inline int uhpy_copy_values(HeapObject *hp, uh_values_fetch_fn fetch, void *arg,
				   uh_value *vals, PyObject **objs, uint32_t cap)
{
	uint32_t n = 0;
	int rc;

	memset(objs, 0, cap * sizeof(*objs));
	if ((rc = fetch(hp->h, arg, vals, &n)) != 0)
		return rc;
	if (n <= cap && (rc = uhpy_copy_in_place(hp, vals, n, objs)) != -1)
		return rc;
	return uhpy_copy_checked(hp, fetch, arg, vals, objs, cap, n);
}
PyObject *uhpy_value_copy(HeapObject *hp, const uh_value *v);
PyObject *uhpy_string_at(HeapObject *hp, uh_off s, uint32_t type);
/* Where bytes value v (a bytes object, UH_T_BYTES, or an inline value,
 * UH_T_IBYTES) keeps its bytes in the mapping, and *cls the class of the
 * object holding them (its header says while they are v's): 0, or -1
 * with an exception. */
int uhpy_bytes_span(HeapObject *hp, const uh_value *v, const void **data, size_t *len,
		    uint32_t *cls);

/* pin.c: a proxy's or view's GC pin of ref, on the Heap's session: 0,
 * or -1 with an exception (FreedObjectError when the object was freed,
 * HeapClosedError); pin->id stays 0 then. uhpy_pin_drop releases it if
 * its session is still the Heap's (else heapd dropped it with the
 * session); any thread with the GIL, never raises. */
int uhpy_pin_take(HeapObject *hp, uh_off ref, uhpy_pin *pin);
void uhpy_pin_drop(HeapObject *hp, uhpy_pin *pin);

/* proxy.c */
extern PyType_Spec uhpy_proxy_spec;
int uhpy_proxy_usable(ProxyObject *p);
/* The Python type that proxies objects of class cls (a new reference;
 * cached per heap). */
PyObject *uhpy_proxy_type(HeapObject *hp, uint32_t cls);
/* A new proxy of the object at off, of class cls. */
PyObject *uhpy_wrap(HeapObject *hp, uh_off off, uint32_t cls);
/* What a reference reads as: None, a str/bytes value, or a proxy. */
PyObject *uhpy_wrap_ref(HeapObject *hp, uh_off off);
/* 1 and *off if obj is a proxy of heap hp; 0 if it is no proxy; -1 with
 * an exception if it is a proxy of another heap connection. */
int uhpy_same_heap(HeapObject *hp, PyObject *obj, uh_off *off);

/* value.c: Python <-> uh_value / uh_key. */
int uhpy_to_value(HeapObject *hp, PyObject *o, uh_value *v);
PyObject *uhpy_from_value(HeapObject *hp, const uh_value *v);
int uhpy_to_key(uint32_t kind, PyObject *o, uh_key *k);
PyObject *uhpy_from_key(const uh_key *k);
int uhpy_value_allocates(PyObject *o);
/* The bytes a str (its UTF-8), bytes or bytearray o stores, borrowed from
 * o, and UH_T_STRING or UH_T_BYTES: 1; 0 when o is none of these; -1
 * with an exception (a str with no UTF-8: lone surrogates). */
int uhpy_str_bytes(PyObject *o, uint32_t *type, const char **data, Py_ssize_t *len);
/* String and bytes values belong to the slot holding them: a put, set,
 * remove or pop that replaces one frees it. */
#define UHPY_OWNED UH_FREE_OLD_VALUE
/* One data-type call storing o at where; uhpy_store converts o and runs
 * it, in one step with the allocation of a str/bytes value, so that a
 * failure leaves nothing behind: 0, or -1 with an exception. */
typedef int (*uhpy_store_fn)(uh_heap *h, ProxyObject *p, const void *where,
			     const uh_value *v);
int uhpy_store(ProxyObject *p, const void *where, PyObject *o, uhpy_store_fn fn,
	       const char *what);

/* view.c: zero-copy views of bytes values. */
extern PyType_Spec uhpy_view_spec;
/* A read-only memoryview of bytes value v's bytes in place (a bytes
 * object's or an inline value's, uhpy_bytes_span). */
PyObject *uhpy_view_of(HeapObject *hp, const uh_value *v);

/* mapread.c: one key of a hash or sorted map proxy. */
static inline int uhpy_map_sorted(const ProxyObject *p)
{
	return p->cls == UH_CLASS_SMAP;
}
/* The map's key kind (UH_KEY_*), cached in the proxy: 0, or -1 with an
 * exception. */
int uhpy_map_kind(ProxyObject *p, uint32_t *kind);
/* The proxy usable and key converted (borrowed from key): 0, or -1. */
int uhpy_map_key(ProxyObject *p, PyObject *key, uh_key *k);
/* 1 found (*v set), 0 not found, -1 with an exception. */
int uhpy_map_lookup(ProxyObject *p, PyObject *key, uh_value *v);
/* key's value as a Python object: 1 with *out, 0 not found, -1. */
int uhpy_map_read(ProxyObject *p, PyObject *key, PyObject **out);
/* v, the value of key a step read, as a Python object; key's value now
 * if v was a str/bytes value replaced under its copy (0 if key was
 * removed since). */
int uhpy_map_value_or_lookup(ProxyObject *p, PyObject *key, const uh_value *v,
			      PyObject **out);
/* Puts and removes on sorted maps by this process (map.c counts them,
 * a scan's read-ahead is dropped when it moved, mapiter.c). */
extern uint64_t uhpy_smap_writes;

/* mapiter.c: iterators of map proxies (the MapBase methods that make
 * them: iter(), _iter(mode), _scan(start, stop, reverse, mode)). */
extern PyType_Spec uhpy_iter_spec;
PyObject *uhpy_map_iter(ProxyObject *p);
PyObject *uhpy_map_iter_mode(ProxyObject *p, PyObject *arg);
PyObject *uhpy_map_scan(ProxyObject *p, PyObject *args);

/* field.c */
extern PyType_Spec uhpy_field_spec;
PyObject *uhpy_type_names(void);
/* All fields of persistent object obj, read at one instant: a dict by
 * name (as_dict) or a tuple in declaration order (uniheap.asdict/astuple). */
PyObject *uhpy_read_fields(PyObject *obj, int as_dict);
/* 1 when every value of a record with these fields (its class's
 * __uniheap_fields__, a tuple) lies in its payload (numbers, refs, inline
 * values) and every field is bound; 0 otherwise (an out-of-line str or
 * bytes value, which only a proxy reads safely). */
int uhpy_payload_decodes(PyObject *fields);
/* A dict of the names of fields (a class's __uniheap_fields__ that
 * uhpy_payload_decodes accepted), in order, each value None: the
 * template uhpy_payload_dict copies. NULL with an exception. */
PyObject *uhpy_fields_template(PyObject *fields);
/* 1 with the index, type and capacity of the bound inline field of
 * fields (a class's __uniheap_fields__) named name, trying position i
 * first (values given in the class's order find theirs at once); 0 when
 * there is none such (the caller asks libuniheap's class table). */
int uhpy_inline_field(PyObject *fields, Py_ssize_t i, PyObject *name, uint32_t *idx,
		      uint32_t *type, uint32_t *capacity);
/* The fields of a record (its class's __uniheap_fields__) as a dict,
 * decoded from payload, a copy of the record's len payload bytes
 * (uh_record_read's): 1 with *out; 0 when a value is not in the payload
 * (an out-of-line str or bytes value; an unbound field), for the caller
 * to read through a proxy; -1 with an exception. template, if not NULL,
 * is a dict of the fields' names in order (values None) that the result
 * is copied from (no growth while it is filled), given only for fields
 * uhpy_payload_decodes accepted. */
int uhpy_payload_dict(HeapObject *hp, PyObject *fields, PyObject *template,
		      const unsigned char *payload, size_t len, PyObject **out);

/* maprecord.c: records as map values, one call each (map methods) */
PyObject *uhpy_map_get_fields(ProxyObject *p, PyObject *key);
PyObject *uhpy_map_set_field(ProxyObject *p, PyObject *const *args, Py_ssize_t n);
PyObject *uhpy_map_scan_fields(ProxyObject *p, PyObject *const *args, Py_ssize_t n);
PyObject *uhpy_map_put_record(ProxyObject *p, PyObject *const *args, Py_ssize_t n);

/* wait.c: waiting for changes (uniheap.h "Waiting for changes"). Waits
 * run on the heap's own wait sessions, never on hp->h. */
extern PyType_Spec uhpy_waiter_spec;
int uhpy_wait_init(PyObject *m, uhpy_state *st);	/* ROOTS */
PyObject *uhpy_heap_token(HeapObject *hp, PyObject *obj);
PyObject *uhpy_heap_wait(HeapObject *hp, PyObject *args, PyObject *kw);
PyObject *uhpy_heap_wait_pool(HeapObject *hp, PyObject *unused);
/* close(): cancels the waits in progress and ends the wait sessions. */
void uhpy_waits_close(HeapObject *hp);

/* map.c, seq.c: the proxy types of the data types. */
extern PyType_Spec uhpy_map_spec;
extern PyType_Spec uhpy_list_spec;
extern PyType_Spec uhpy_array_spec;

/* heap.c */
extern PyType_Spec uhpy_heap_spec;

#endif
