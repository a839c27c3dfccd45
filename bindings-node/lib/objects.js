'use strict';
// Persistent classes: PObject, their layouts and registration in a heap,
// and generic proxies of classes this process never declared.
//
//   class Account extends PObject {
//     static className = 'bank.Account';
//     static fields = { owner: 'string', balance: 'i64', next: 'ref:bank.Account' };
//   }
//   const a = new Account(heap, { owner: 'ada', balance: 100 });
//
// A class's layout (its fields, inherited ones first) is read from its
// static declarations on first use. heapd lays the fields out (declaration
// order, natural alignment), so the same class name and field types give
// the same layout in every language; registering a name the heap knows
// with other fields raises ClassMismatchError naming the first difference.
const { inspect } = require('node:util');
const { scratch, bytesBuf } = require('./native');
const {
  kH, kO, kG, kState, Identity, initProxy, inspectShort,
} = require('./identity');
const {
  check, fromNative, bytesAt,
} = require('./internal');
const {
  T, TYPE_NAMES, isInline, install, getBigInt, unsafeInteger,
} = require('./fields');
const { ClassMismatchError, closedError } = require('./errors');

const kLayout = Symbol('uniheap.layout');
const kHeap = Symbol('uniheap.boundHeap');	// defineClass(): the heap `new C(values)` uses
const kClass = Symbol('uniheap.class');		// prototype -> its class

/** heap class name -> the class this thread declared under it */
const declared = new Map();
/** built-in class ids of the collections (filled by collections.js) */
const builtins = new Map();

const NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
// Names a field cannot take on a JS object without breaking it.
const RESERVED = new Set([...Object.getOwnPropertyNames(Object.prototype), 'toJSON', 'then',
  'constructor']);

// ---- layouts ----

function parseType(owner, name, spec) {
  let type = spec;
  let target = null;
  let max = null;
  const inl = typeof spec === 'string' ? /^(string|bytes):([0-9]+)$/.exec(spec) : null;
  if (spec !== null && typeof spec === 'object' && 'type' in spec) {
    ({ type, target = null, max = null } = spec);
  } else if (typeof spec === 'string' && spec.startsWith('ref:')) {
    type = 'ref';
    target = spec.slice(4);
  } else if (inl) {	// 'bytes:100': inline, capacity 100
    [, type, max] = inl;
    max = Number(max);
  }
  let code = typeof type === 'string' && Object.hasOwn(T, type) && !/^i(string|bytes)$/.test(type)
    ? T[type] : 0;
  if (!code) {
    throw new TypeError(`${owner}.${name}: unknown field type ${inspect(spec)}: one of ` +
      `${TYPE_NAMES.slice(1, 11).join(', ')}, "string:<max>", "bytes:<max>", or ` +
      '"ref:<class name>"');
  }
  if (max !== null) {
    if ((code !== T.string && code !== T.bytes) || !Number.isInteger(max) || max < 1 ||
        max > 65535) {
      throw new TypeError(`${owner}.${name}: only string and bytes fields have a capacity, ` +
        `an integer from 1 to 65535, not ${inspect(max)}`);
    }
    code = code === T.string ? T.istring : T.ibytes;
  }
  if (target !== null && code !== T.ref) {
    throw new TypeError(`${owner}.${name}: only ref fields have a target class`);
  }
  if (target !== null && typeof target !== 'string' && typeof target !== 'function') {
    throw new TypeError(`${owner}.${name}: a ref target is a class or a class name`);
  }
  return { type: code, target, capacity: max ?? 0 };
}

function ownFields(C, name, inherited) {
  const spec = Object.hasOwn(C, 'fields') ? C.fields : {};
  if (spec === null || typeof spec !== 'object') {
    throw new TypeError(`class ${C.name}: static fields must be an object of name: type`);
  }
  const taken = new Set(inherited.map((f) => f.name));
  const out = [];
  for (const [fname, fspec] of Object.entries(spec)) {
    if (!NAME_RE.test(fname) || Buffer.byteLength(fname) > 63) {
      throw new TypeError(`${name}.${fname}: field names are 1..63 characters of ` +
        '[A-Za-z0-9_], not starting with a digit');
    }
    if (RESERVED.has(fname)) {
      throw new TypeError(`${name}.${fname}: "${fname}" is taken by every JS object; ` +
        'choose another field name');
    }
    if (taken.has(fname)) throw new TypeError(`${name}: field "${fname}" is declared twice`);
    taken.add(fname);
    const { type, target, capacity } = parseType(name, fname, fspec);
    out.push({
      name: fname, type, target, index: inherited.length + out.length, offset: -1,
      what: `${name}.${fname}`, refClass: null, proto: C.prototype, capacity,
    });
  }
  return out;
}

/** The layout of a declared class (computed once). */
function layoutOf(C) {
  if (Object.hasOwn(C, kLayout)) return C[kLayout];
  if (C === PObject) {
    throw new TypeError('PObject is abstract: declare a subclass with static className and fields');
  }
  const name = Object.hasOwn(C, 'className') ? C.className : undefined;
  if (typeof name !== 'string' || name === '') {
    throw new TypeError(`class ${C.name}: give its language-neutral heap name, e.g. ` +
      `static className = "app.${C.name}"`);
  }
  const parent = Object.getPrototypeOf(C);
  const inherited = parent === PObject ? [] : layoutOf(parent).fields;
  const fields = [...inherited, ...ownFields(C, name, inherited)];
  const L = { name, fields, byName: new Map(fields.map((f) => [f.name, f])), generic: false };
  C[kLayout] = L;
  C.prototype[kClass] = C;
  declared.set(name, C);
  return L;
}

// ---- registration in a heap ----

/** The heap class id a typed ref field names (0: any object). A ref to the
 * class itself, or along a cycle of classes being registered, stays untyped
 * in the heap; JS still checks it on assignment. */
function refClassId(st, C, L, f) {
  let t = f.target;
  if (f.type !== T.ref || t === null) return 0;
  if (typeof t === 'string') {
    if (t === L.name) {
      f.refClass = C;
      return 0;
    }
    const known = declared.get(t) || [...builtins.keys()].find((B) => B.name === t);
    if (!known) {
      const id = st.s.classFind(t);
      if (id < 0) {
        throw new ClassMismatchError(`${f.what}: ref target class "${t}" is neither declared ` +
          'in this process nor registered in the heap', 'UH_ECLASSMISMATCH', -6);
      }
      return id;
    }
    t = known;
  }
  if (builtins.has(t)) {
    f.refClass = t;
    return builtins.get(t);
  }
  if (!(t.prototype instanceof PObject)) {
    throw new TypeError(`${f.what}: a ref target is a PObject subclass, PMap, PSortedMap, ` +
      `PList or PArray, not ${t.name}`);
  }
  f.refClass = t;
  if (t === C || st.registering.has(t)) return 0;
  return classIdIn(st, t);
}

/** The id of class C in the heap of st; registers C there on first use. */
function classIdIn(st, C) {
  let cid = st.ids.get(C);
  if (cid !== undefined) return cid;
  const L = layoutOf(C);
  if (L.generic) throw new TypeError(`${L.name}: a generic proxy class cannot make objects`);
  st.registering.add(C);
  try {
    // an inline field's capacity goes in the ref-class word (uh_field_spec)
    const spec = L.fields.map((f) => [f.name, f.type, f.capacity || refClassId(st, C, L, f)]);
    cid = st.s.registerClass(L.name, spec);
  } finally {
    st.registering.delete(C);
  }
  bind(L, st.s.classInfo(cid)[4]);
  st.ids.set(C, cid);
  st.types.set(cid, C);
  return cid;
}

/** Give each field its offset (the first registration decides; another
 * heap must agree) and its accessors. */
function bind(L, heapFields) {
  L.fields.forEach((f, i) => {
    const off = heapFields[i][2];
    if (f.offset === off) return;
    if (f.offset >= 0) {
      throw new ClassMismatchError(`${f.what}: laid out at offset ${f.offset} in one heap and ` +
        `${off} in another`, 'UH_ECLASSMISMATCH', -6);
    }
    f.offset = off;
    install(f.proto, f);
  });
}

// ---- generic proxies ----

/** A class built from a class-table entry [id, name, kind, payload,
 * fields]: field access by the heap's field names. */
function genericClass(info) {
  const [, name, , , fields] = info;
  const short = name.slice(name.lastIndexOf('.') + 1) || 'Generic';
  const G = { [short]: class extends PObject {} }[short];
  const L = {
    name,
    fields: fields.map(([fname, type, offset, word], index) => ({
      name: fname, type, target: null, index, offset, what: `${name}.${fname}`, refClass: null,
      proto: G.prototype, capacity: isInline(type) ? word : 0,
    })),
    generic: true,
  };
  L.byName = new Map(L.fields.map((f) => [f.name, f]));
  G[kLayout] = L;
  G.prototype[kClass] = G;
  for (const f of L.fields) install(G.prototype, f, !RESERVED.has(f.name));
  return G;
}

/** The class that proxies objects of class id cls in the heap of st. */
function proxyType(st, cls) {
  for (const [B, id] of builtins) {
    if (id === cls) return B;
  }
  const info = st.s.classInfo(cls);
  if (info === null || info[2] !== 1) {
    throw new TypeError(`class ${cls} is not a record class: it has no proxy`);
  }
  const C = declared.get(info[1]);
  if (C) {
    try {
      classIdIn(st, C);	// checks the layout
      return C;
    } catch (e) {
      if (!(e instanceof ClassMismatchError)) throw e;
      // declared here with another layout: read it generically
    }
  }
  const G = genericClass(info);
  st.ids.set(G, cls);
  st.types.set(cls, G);
  return G;
}

// ---- PObject ----

function fieldOf(obj, name) {
  const L = obj[kClass][kLayout];
  const f = L.byName.get(name);
  if (!f) throw new TypeError(`${L.name} has no field "${name}"`);
  return f;
}

const FIELD_SIZE = [0, 1, 1, 2, 4, 8, 4, 8, 8, 8, 8];

/** Bytes f takes in its object: an inline field's length word and capacity. */
function fieldSize(f) {
  return isInline(f.type) ? 4 + f.capacity : FIELD_SIZE[f.type];
}

/** What the addon's readFields reads for layout L (made once): the
 * 8-byte aligned bytes [lo, hi) the fields span, then each field's type
 * and offset. heapd lays the fields out in declaration order. */
function spanOf(L) {
  if (L.span) return L.span;
  const first = L.fields[0];
  const last = L.fields[L.fields.length - 1];
  const span = new Int32Array(2 + 2 * L.fields.length);
  span[0] = first.offset & ~7;
  span[1] = (last.offset + fieldSize(last) + 7) & ~7;
  L.fields.forEach((f, i) => {
    span[2 + 2 * i] = f.type | (f.capacity << 8);	// an inline field's capacity above its type
    span[3 + 2 * i] = f.offset;
  });
  L.span = span;
  return span;
}

/** Every field of obj read at one instant (readFields), as
 * { name: value } in declaration order, values as the getters give them. */
function readFields(obj) {
  const L = obj[kClass][kLayout];
  check(obj);
  const out = {};
  if (L.fields.length === 0) return out;
  const st = obj[kH];
  const vals = st.s.readFields(obj[kO], obj[kG], spanOf(L), L.name);
  let at = 0;	// bytes values left in the bytes buffer lie there in field order
  for (let i = 0; i < vals.length; i++) {
    const f = L.fields[i];
    let v = vals[i];
    if (f.type === T.bytes && typeof v === 'number') {	// its length
      v = bytesAt(at, v);
      at += v.length;
    } else if (Array.isArray(v)) {	// a reference: [off, gen, class]
      v = st.wrap(v[0], v[1], v[2]);
    } else if (typeof v === 'bigint') {
      throw unsafeInteger(f, v);
    }
    out[f.name] = v;
  }
  return out;
}

/** The field indexes of keys when every one names an inline field and
 * its value has the field's type (a string for 'string:N', a Uint8Array
 * for 'bytes:N'), else null (the setters then write them, and say what is
 * wrong). */
function inlineIndexes(L, keys, vals) {
  const idx = [];
  for (const k of keys) {
    const f = L.byName.get(k);
    const v = vals[k];
    if (f.type === T.ibytes ? !(v instanceof Uint8Array) : f.type !== T.istring || typeof v !== 'string') {
      return null;
    }
    idx.push(f.index);
  }
  return idx;
}

/** What a new record of class C with field values vals takes in one
 * native call (allocInline, mapPutRecord): its class id in st's heap,
 * and its fields' indexes and values; null when a value does not go to
 * an inline field as it is (then only a proxy can write it). TypeError
 * for a class that cannot make objects or a field C does not have. */
function inlineRecord(st, C, vals, what) {
  const L = layoutOf(C);
  if (L.generic) throw new TypeError(`${what}: ${L.name} is read through a generic proxy class`);
  if (vals === null || typeof vals !== 'object') {
    throw new TypeError(`${what}: values must be an object of fields`);
  }
  const keys = Object.keys(vals);
  for (const k of keys) {
    if (!L.byName.has(k)) throw new TypeError(`${L.name} has no field "${k}"`);
  }
  const idx = inlineIndexes(L, keys, vals);
  return idx === null ? null : { cid: classIdIn(st, C), idx, values: keys.map((k) => vals[k]) };
}

// The bytes buffer as u32 words: packInline's field headers.
const bytesWords = new Uint32Array(bytesBuf.buffer, bytesBuf.byteOffset, bytesBuf.length >>> 2);

/** inlineRecord's values for mapPutRecordPacked: each value of vals
 * copied into the bytes buffer behind its field's index and its length
 * (4-byte aligned, as src/records.cc reads them). The count of fields
 * packed, or -1 when vals is not simply inline values of C that fit the
 * buffer: inlineRecord then decides (and names the error, if any). */
function packInline(C, vals) {
  const L = layoutOf(C);
  if (L.generic || vals === null || typeof vals !== 'object') return -1;
  const cap = bytesBuf.length;
  let at = 0;
  let n = 0;
  for (const k of Object.keys(vals)) {
    const f = L.byName.get(k);
    if (f === undefined) return -1;
    const v = vals[k];
    let len;
    if (f.type === T.ibytes && v instanceof Uint8Array) {
      if (v.length > cap - at - 8) return -1;
      bytesBuf.set(v, at + 8);
      len = v.length;
    } else if (f.type === T.istring && typeof v === 'string') {
      if (v.length * 3 > cap - at - 8) return -1;	// UTF-8: at most 3 bytes per UTF-16 unit
      len = bytesBuf.write(v, at + 8);
    } else {
      return -1;
    }
    bytesWords[at >>> 2] = f.index;
    bytesWords[(at >>> 2) + 1] = len;
    at = (at + 8 + len + 3) & ~3;
    n++;
  }
  return n;
}

function heapArgs(C, heap, values) {
  if (heap && heap[kState]) return [heap[kState], values];
  if (C[kHeap]) return [C[kHeap][kState], heap];
  throw new TypeError(`new ${C.name}(heap, values): the first argument must be a Heap ` +
    '(from uniheap.connect())');
}

class PObject extends Identity {
  /** new C(heap, { field: value, ... }): a new object, its fields set in
   * one block. A class from heap.defineClass() takes only the values. */
  constructor(heap, values) {
    super();
    const C = new.target;
    const L = layoutOf(C);
    if (L.generic) {
      throw new TypeError(`${L.name} is read through a generic proxy class: declare the class ` +
        '(heap.defineClass) to make objects of it');
    }
    const [st, vals] = heapArgs(C, heap, values);
    if (st.closed) throw closedError();
    const r = inlineRecord(st, C, vals === undefined ? {} : vals, `new ${C.name}(heap, values)`);
    if (r !== null && r.idx.length > 0) {	// one native call: allocated and written in one step
      const off = st.s.allocInline(r.cid, r.idx, r.values);
      scratch[0] = 0;
      initProxy(this, st, off, scratch[1], r.cid);
      return;
    }
    const cid = r !== null ? r.cid : classIdIn(st, C);
    const alloc = () => {
      const off = st.s.alloc(cid);
      scratch[0] = 0;
      initProxy(this, st, off, scratch[1], cid);
    };
    if (r !== null) {	// no values
      alloc();
      return;
    }
    st.heap.atomic(() => {
      alloc();
      for (const k of Object.keys(vals)) this[k] = vals[k];
    });
  }

  get $className() {
    return this[kClass][kLayout].name;
  }

  /** A field by name (also fields whose name JS reserves). */
  $get(name) {
    return fieldOf(this, name).get.call(this);
  }

  $set(name, value) {
    fieldOf(this, name).set.call(this, value);
  }

  /** Every field, { name: value } in declaration order, all read at one
   * instant: one commit's values, never a mix of two (outside a block
   * too; inside one, the block's snapshot with its own writes). */
  $fields() {
    return readFields(this);
  }

  /** The exact value of an integer field as a bigint (any i64). */
  $getBigInt(name) {
    return getBigInt(this, fieldOf(this, name));
  }

  [inspect.custom](depth, options, insp) {
    const L = this[kClass][kLayout];
    const head = `${L.name} @${this[kO]}`;
    try {
      check(this);
    } catch (e) {
      return `${head} <${e.name}>`;
    }
    const o = {};
    for (const f of L.fields) {
      let v;
      try {
        v = this.$get(f.name);
      } catch (e) {
        v = `<${e.name}>`;
      }
      o[f.name] = inspectShort(v);
    }
    return `${head} ${insp(o, { ...options, depth: options.depth === null ? null : 1 })}`;
  }
}

/** heap.defineClass(name, fields) or heap.defineClass(C): register a class
 * in the heap of st now (ClassMismatchError here, not at first use). */
function defineClass(heap, st, nameOrClass, fields) {
  let C = nameOrClass;
  if (typeof nameOrClass === 'string') {
    const short = nameOrClass.slice(nameOrClass.lastIndexOf('.') + 1) || 'PClass';
    C = { [short]: class extends PObject {} }[short];
    C.className = nameOrClass;
    C.fields = fields === undefined ? {} : fields;
    C[kHeap] = heap;
  } else if (typeof C !== 'function' || !(C.prototype instanceof PObject)) {
    throw new TypeError('defineClass(name, fields) or defineClass(C) with C a PObject subclass');
  }
  classIdIn(st, C);
  return C;
}

module.exports = {
  PObject, declared, builtins, layoutOf, classIdIn, proxyType, defineClass, fromNative,
  inlineRecord, packInline,
};
