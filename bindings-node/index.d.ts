// Type declarations of the uniheap package (lib/index.js).

/** Field types of persistent classes. */
export type FieldType =
  | 'bool' | 'i8' | 'i16' | 'i32' | 'i64' | 'f32' | 'f64' | 'string' | 'bytes' | 'ref'
  | `ref:${string}`
  /** inline: the value lives in the object, at most N bytes (FORMAT.md 3.2) */
  | `string:${number}` | `bytes:${number}`;

/** A ref field with a target class (a PObject subclass, a collection
 * class or a heap class name). */
export interface RefField {
  type: 'ref';
  target: string | PObjectClass | typeof PMap | typeof PSortedMap | typeof PList | typeof PArray;
}

export type FieldSpec = FieldType | RefField;
export type Fields = Record<string, FieldSpec>;

/** The JS value of a field type. */
type ValueOf<T> =
  T extends 'bool' ? boolean :
  T extends 'i8' | 'i16' | 'i32' | 'i64' | 'f32' | 'f64' ? number :
  T extends 'string' ? string | null :
  T extends 'bytes' ? Buffer | null :
  T extends `string:${number}` ? string :
  T extends `bytes:${number}` ? Buffer :
  PObject | PCollection | null;

/** What a field accepts when written. */
type InputOf<T> =
  T extends 'bool' ? boolean | 0 | 1 :
  T extends 'i8' | 'i16' | 'i32' ? number | bigint :
  T extends 'i64' ? number | bigint :
  T extends 'f32' | 'f64' ? number :
  T extends 'string' ? string | null | undefined :
  T extends 'bytes' ? Uint8Array | null | undefined :
  T extends `string:${number}` ? string :
  T extends `bytes:${number}` ? Uint8Array :
  PObject | PCollection | null | undefined;

/** The fields of a declaration as properties (getters and setters). */
export type FieldsOf<F extends Fields> = {
  -readonly [K in keyof F]: ValueOf<F[K] extends RefField ? 'ref' : F[K]>;
};

export type ValuesOf<F extends Fields> = {
  [K in keyof F]?: InputOf<F[K] extends RefField ? 'ref' : F[K]>;
};

/** A value a collection holds. Integers beyond 2^53 - 1 read as bigint. */
export type StoredValue =
  | null | boolean | number | bigint | string | Buffer | PObject | PCollection;
/** A value a collection accepts. */
export type StorableValue =
  | null | undefined | boolean | number | bigint | string | Uint8Array | PObject | PCollection
  | F64;

export type KeyType = 'string' | 'bytes' | 'int';
type KeyOf<K extends KeyType> = K extends 'string' ? string : K extends 'bytes' ? Buffer : number | bigint;
type KeyIn<K extends KeyType> = K extends 'string' ? string : K extends 'bytes' ? Uint8Array : number | bigint;

/** What every proxy has: `$`-names never clash with field names. */
export interface Proxied {
  /** The Heap this proxy belongs to. */
  readonly $heap: Heap;
  /** The object's offset in the heap file (bits 0..47 of its reference). */
  readonly $offset: number;
  /** Its generation (bits 48..63 of its reference). */
  readonly $generation: number;
  /** The persistent reference, exact; heap.proxy(ref) turns it back. */
  readonly $ref: bigint;
  readonly $className: string;
  readonly $classId: number;
  /** True when other names the same object of the same connection. */
  $equals(other: unknown): boolean;
}

/** Base of persistent classes: declare static className and fields. */
export class PObject implements Proxied {
  /** The language-neutral class name in the heap. */
  static className?: string;
  /** name -> field type; inherited fields come first. */
  static fields?: Fields;
  /** Allocate an object of this class and set fields in one block. */
  constructor(heap: Heap, values?: Record<string, unknown>);
  readonly $heap: Heap;
  readonly $offset: number;
  readonly $generation: number;
  readonly $ref: bigint;
  readonly $className: string;
  readonly $classId: number;
  $equals(other: unknown): boolean;
  /** A field by name (also one whose name JS reserves). */
  $get(name: string): unknown;
  $set(name: string, value: unknown): void;
  /** Every field, name -> value in declaration order, all read at one
   * instant (one commit's values, also outside a block). */
  $fields(): Record<string, unknown>;
  /** The exact value of an integer field as a bigint (the whole i64 range). */
  $getBigInt(name: string): bigint;
}

export type PObjectClass = abstract new (...args: any[]) => PObject;

/** A class made by heap.defineClass(name, fields): new C(values). */
export interface DefinedClass<F extends Fields> {
  new (values?: ValuesOf<F>): PObject & FieldsOf<F>;
  new (heap: Heap, values?: ValuesOf<F>): PObject & FieldsOf<F>;
  readonly className: string;
  readonly fields: F;
  readonly prototype: PObject & FieldsOf<F>;
}

export abstract class PCollection implements Proxied {
  readonly $heap: Heap;
  readonly $offset: number;
  readonly $generation: number;
  readonly $ref: bigint;
  readonly $className: string;
  readonly $classId: number;
  $equals(other: unknown): boolean;
}

/** A zero-copy view of a bytes value where it lies in the mapping
 * (PMap.view): read-only by contract. Empty once its heap is closed; shows
 * the value while the value lives. Derived arrays (subarray, slice) are
 * plain Uint8Arrays. */
export class BytesView extends Uint8Array {
  /** True while the object holding the bytes it shows (a bytes object,
   * or the entry in which a PMap keeps a value of up to 128 bytes) is still
   * there (not freed); false once the heap is closed. Copy, then check,
   * for a consistent copy. */
  readonly valid: boolean;
  /** The reference of the object holding the bytes. */
  readonly $ref: bigint;
}

export interface MapOptions<K extends KeyType> {
  /** The key type, fixed at creation (default 'string'). */
  key?: K;
}

/** Persistent hash map with the Map interface. */
export class PMap<K extends KeyType = 'string', V extends StoredValue = StoredValue>
  extends PCollection implements Iterable<[KeyOf<K>, V]> {
  constructor(heap: Heap, entries?: Iterable<readonly [KeyIn<K>, StorableValue]> | null,
    options?: MapOptions<K>);
  readonly keyType: K;
  readonly size: number;
  get(key: KeyIn<K>): V | undefined;
  /** The bytes value under key in place, no copy (undefined when absent;
   * TypeError when the value is not bytes). Never write to it. */
  view(key: KeyIn<K>): BytesView | undefined;
  /** The fields of the record stored under key, as get(key).$fields()
   * gives them (all at one instant), without a proxy of the record: the
   * lookup and the copy are one native call. undefined when absent;
   * TypeMismatchError when the value is not a record. */
  getFields(key: KeyIn<K>): Record<string, unknown> | undefined;
  /** Replace an inline field ('bytes:N' / 'string:N') of the record under
   * key in place, as get(key)[field] = value would, in one native call
   * (in the open block, else atomic and durable alone). false when key is
   * absent (nothing written). */
  setField(key: KeyIn<K>, field: string, value: string | Uint8Array): boolean;
  /** Store a new record of class C under key, as set(key, new C(heap,
   * values)) would, in one native call (allocation, field writes and put;
   * in the open block, else atomic and durable alone). Every value must go
   * to an inline field as it is (TypeError otherwise); freeOld also frees
   * the object key held. */
  putRecord(key: KeyIn<K>, C: PObjectClass, values: Record<string, string | Uint8Array>,
    freeOld?: boolean): this;
  has(key: KeyIn<K>): boolean;
  set(key: KeyIn<K>, value: StorableValue): this;
  delete(key: KeyIn<K>): boolean;
  /** Remove key and return its value (undefined when absent), atomically. */
  take(key: KeyIn<K>): V | undefined;
  clear(): void;
  keys(): IterableIterator<KeyOf<K>>;
  values(): IterableIterator<V>;
  entries(): IterableIterator<[KeyOf<K>, V]>;
  [Symbol.iterator](): IterableIterator<[KeyOf<K>, V]>;
  forEach(fn: (value: V, key: KeyOf<K>, map: this) => void, thisArg?: unknown): void;
  /** libuniheap's structural check; throws naming a problem. */
  check(): void;
}

export interface RangeOptions {
  /** Descending: from >= key > to. */
  reverse?: boolean;
}

/** Persistent sorted map (B+-tree): iteration in key order (code point
 * order for strings, bytewise for bytes, numeric for integers). */
export class PSortedMap<K extends KeyType = 'string', V extends StoredValue = StoredValue>
  extends PMap<K, V> {
  /** Entries with from <= key < to (reverse: from >= key > to);
   * undefined leaves that end open. */
  range(from?: KeyIn<K>, to?: KeyIn<K>, options?: RangeOptions): IterableIterator<[KeyOf<K>, V]>;
  /** [key, fields] of the records with from <= key < to (undefined leaves
   * that end open), at most limit (default: all), each as getFields gives
   * it; up to 32 records per native call, each read at its own instant
   * (in a block: the block's snapshot). */
  rangeFields(from?: KeyIn<K>, to?: KeyIn<K>, options?: { limit?: number }):
    Array<[KeyOf<K>, Record<string, unknown>]>;
  first(): [KeyOf<K>, V] | undefined;
  last(): [KeyOf<K>, V] | undefined;
}

/** Array-like base of PList and PArray: index access list[i] works too. */
export abstract class PSequence<V extends StoredValue = StoredValue>
  extends PCollection implements Iterable<V> {
  [index: number]: V;
  readonly length: number;
  /** The value at index (negative: from the end); undefined outside. */
  at(index: number): V | undefined;
  /** Replace the value at index (negative: from the end). */
  set(index: number, value: StorableValue): this;
  values(): IterableIterator<V>;
  keys(): IterableIterator<number>;
  entries(): IterableIterator<[number, V]>;
  [Symbol.iterator](): IterableIterator<V>;
  forEach(fn: (value: V, index: number, seq: this) => void, thisArg?: unknown): void;
  toArray(): V[];
  indexOf(value: unknown): number;
  includes(value: unknown): boolean;
}

/** Persistent growable list. */
export class PList<V extends StoredValue = StoredValue> extends PSequence<V> {
  constructor(heap: Heap, values?: Iterable<StorableValue> | null);
  /** Append values; returns the new length. */
  push(...values: StorableValue[]): number;
  pop(): V | undefined;
  shift(): V | undefined;
  unshift(...values: StorableValue[]): number;
  /** Insert before index (negative: from the end; clamped). */
  insert(index: number, value: StorableValue): void;
  /** Remove and return the value at index; undefined when out of range. */
  removeAt(index: number): V | undefined;
}

export type ElemType = 'bool' | 'i8' | 'i16' | 'i32' | 'i64' | 'f32' | 'f64' | 'string' | 'bytes' | 'ref';

/** Persistent fixed-length array of one element type. */
export class PArray<V extends StoredValue = StoredValue> extends PSequence<V> {
  constructor(heap: Heap, elemType: ElemType, lengthOrValues: number | Iterable<StorableValue>);
  readonly elemType: ElemType;
}

/** heap.roots: the heap's named durable roots. */
export class Roots implements Iterable<[string, PObject | PCollection]> {
  get(name: string): PObject | PCollection | undefined;
  has(name: string): boolean;
  /** Publish obj under name (inside a block: with the block). */
  set(name: string, obj: PObject | PCollection): this;
  delete(name: string): boolean;
  readonly size: number;
  keys(): IterableIterator<string>;
  values(): IterableIterator<PObject | PCollection>;
  entries(): IterableIterator<[string, PObject | PCollection]>;
  [Symbol.iterator](): IterableIterator<[string, PObject | PCollection]>;
  forEach(fn: (obj: PObject | PCollection, name: string, roots: this) => void, thisArg?: unknown): void;
}

export interface HeapInfo {
  /** Bytes of the heap this process has mapped (more once it reached a
   * part the heap grew into). */
  heapSize: number;
  formatVersion: number;
  durability: 'pmem' | 'sync' | 'memory';
  session: number;
  readonly: boolean;
  name: string;
  path: string;
  /** Bytes of the heap now, the most it may grow to, bytes held by arenas
   * (as `heapctl status` shows them). */
  curSize: number;
  maxSize: number;
  usedSize: number;
}

export interface HeapStats {
  allocs: number; frees: number; commits: number; emptyCommits: number; aborts: number;
  conflicts: number; barriers: number; flushes: number; logBytes: number; arenaLeases: number;
  lockWaits: number; abortsLocked: number; abortsStale: number; abortsLogfull: number;
  abortsUser: number; retries: number; readWaits: number;
  /** New sessions after heapd ended or restarted, and the ns they took. */
  reattaches: number; reattachNs: number;
  /** Map and sorted-map reads outside blocks answered optimistically, tries
   * of them lost to a concurrent change, and those run as a block after. */
  optReads: number; optRetries: number; optFallbacks: number;
  /** Online GC: pins held now (one per live proxy), GC cycles this session
   * took part in, references it handed to the mark (write barrier, pins),
   * and pushes that waited for the collector to drain. */
  pins: number; gcCycles: number; gcGreys: number; gcBusyWaits: number;
}

export interface ClassInfo {
  id: number;
  name: string;
  kind: number;
  payloadSize: number;
  fields: { name: string; type: string; offset: number; refClass: number; capacity: number }[];
}

/** Stands for the roots wherever token(), changed(), watch() and
 * waitSync() take an object: its token moves when a root is set or removed. */
export const ROOTS: unique symbol;
/** What a wait watches: an object, a collection, or ROOTS. */
export type Watchable = PObject | PCollection | typeof ROOTS;

export interface WaitOptions {
  /** Wait for a token other than this one; default: the token now. */
  since?: bigint | number;
  /** Milliseconds; undefined, null or Infinity: no timeout (0: just look). */
  timeout?: number | null;
}

export interface ChangedOptions extends WaitOptions {
  /** Aborting rejects with AbortError and ends the native wait. */
  signal?: AbortSignal;
}

/** A session with heapd and the heap mapped into this process. */
export class Heap implements Disposable {
  private constructor();
  readonly roots: Roots;
  readonly closed: boolean;
  readonly readonly: boolean;
  readonly inBlock: boolean;
  /** Tries of atomic(fn) before it gives up with ConflictError (100). */
  maxTries: number;
  /** Detach and unmap; pending waits reject with HeapClosedError, an open
   * block is rolled back. Idempotent. */
  close(): void;
  [Symbol.dispose](): void;
  info(): HeapInfo;
  stats(): HeapStats;
  /** Check every object reachable from the roots; returns how many. */
  check(): number;
  classes(): ClassInfo[];
  defineClass<F extends Fields>(name: string, fields: F): DefinedClass<F>;
  defineClass<C extends PObjectClass>(cls: C): C;
  /** The object a persistent reference (obj.$ref) names. */
  proxy(ref: bigint): PObject | PCollection | string | Buffer;
  /** Free an object (at commit inside a block). */
  free(obj: PObject | PCollection): void;
  /** Run fn in a failure-atomic block, re-run after a lost conflict;
   * returns fn's result. fn must be synchronous. */
  atomic<R>(fn: (heap: Heap) => R extends PromiseLike<unknown> ? never : R): R;
  begin(): void;
  commit(): void;
  abort(): void;
  /** The same as uniheap.ROOTS. */
  readonly ROOTS: typeof ROOTS;
  /** obj's change token: every commit that changes obj moves it. */
  token(obj: Watchable): bigint;
  /** obj's new token once it differs from since, or null on timeout.
   * Never blocks the event loop. Rejects with FreedObjectError when obj is
   * freed, UniheapError (UH_ESTATE) inside a block, AbortError on abort,
   * HeapClosedError at close(). */
  changed(obj: Watchable, options?: ChangedOptions): Promise<bigint | null>;
  /** A new token after each change of obj, from now on (changes made
   * while the loop body runs are seen at its next step, several as one). */
  watch(obj: Watchable, options?: { signal?: AbortSignal }): AsyncGenerator<bigint, void, undefined>;
  /** Blocks this thread until obj's token differs from since: the new
   * token, or null on timeout. */
  waitSync(obj: Watchable, options?: WaitOptions): bigint | null;
}

export interface ConnectOptions {
  /** heapd's socket; default $UNIHEAP_SOCKET, else defaultSocket(). */
  socket?: string | null;
  /** Map read-only: writes throw ReadOnlyError. */
  readonly?: boolean;
  /** Milliseconds to wait for a heapd that is not running yet (no socket,
   * or refused), trying again until it answers; 0 fails at once. Default
   * $UNIHEAP_CONNECT_TIMEOUT_MS, else 5000. Then DisconnectedError names
   * the socket and says heapd is not running. connect() blocks meanwhile. */
  timeout?: number | null;
}

export function connect(options?: ConnectOptions | string): Heap;
export function defaultSocket(): string;

/** A number stored as an f64 even when integral. */
export class F64 {
  private constructor();
  readonly value: number;
}
export function f64(value: number): F64;

export class UniheapError extends Error {
  /** libuniheap's code name, e.g. "UH_ECONFLICT" ("UH_ECLOSED" for a closed heap). */
  readonly code: string;
  /** libuniheap's (negative) error code; 0 for the binding's own errors. */
  readonly errno: number;
}
export class ConflictError extends UniheapError {}
export class FreedObjectError extends UniheapError {}
export class ClassMismatchError extends UniheapError {}
export class HeapClosedError extends UniheapError {}
export class DisconnectedError extends UniheapError {}
export class HeapFullError extends UniheapError {}
export class ReadOnlyError extends UniheapError {}
export class BlockTooLargeError extends UniheapError {}
export class TypeMismatchError extends UniheapError {}
export class ValueRangeError extends UniheapError {}
export class InvalidValueError extends UniheapError {}
/** A wait ended by its AbortSignal; the signal's reason is its cause. */
export class AbortError extends Error {
  readonly code: 'ABORT_ERR';
}

export const FORMAT_VERSION: number;
export const LIB_VERSION: string;
export const version: string;
