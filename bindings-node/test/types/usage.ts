// Compiled (never run) by types.test.js: the declarations cover the API.
import * as uniheap from 'uniheap';

const heap: uniheap.Heap = uniheap.connect({ socket: '/tmp/x.sock', readonly: false });
const Account = heap.defineClass('bank.Account', {
  owner: 'string', balance: 'i64', history: 'ref:PList', flag: 'bool',
});
const a = new Account({ owner: 'ada', balance: 10n });
const owner: string | null = a.owner;
const balance: number = a.balance;
a.balance = balance + 1;
a.flag = true;
const exact: bigint = a.$getBigInt('balance');
const ref: bigint = a.$ref;
heap.roots.set('ada', a);
const back = heap.roots.get('ada');
if (back instanceof uniheap.PObject) back.$equals(a);

class Point extends uniheap.PObject {
  static className = 'geo.Point';
  static fields = { x: 'f64', y: 'f64' } as const;
  declare x: number;
  declare y: number;
  norm(): number { return Math.hypot(this.x, this.y); }
}
heap.defineClass(Point);
const p = new Point(heap, { x: 3, y: 4 });
const n: number = p.norm();

const m = new uniheap.PMap(heap, [['k', 1]], { key: 'string' });
m.set('x', uniheap.f64(2)).set('y', p);
const v: uniheap.StoredValue | undefined = m.get('k');
const bv: uniheap.BytesView | undefined = m.view('k');
if (bv !== undefined && bv.valid) console.log(Buffer.from(bv), bv.length, bv.$ref);
const bsm = new uniheap.PSortedMap(heap, null, { key: 'bytes' });
const sv: Uint8Array | undefined = bsm.view(Buffer.from('k'));
for (const [k, val] of m) console.log(k.toUpperCase(), val);
const sm = new uniheap.PSortedMap(heap, null, { key: 'int' });
sm.set(5, 'five');
const first: [number | bigint, uniheap.StoredValue] | undefined = sm.first();
for (const [k] of sm.range(1, 10, { reverse: false })) console.log(k);
const l = new uniheap.PList(heap, [1, 'two']);
const len: number = l.push(3);
const x0 = l[0];
const arr = new uniheap.PArray(heap, 'i32', 3);
arr.set(0, 5);
const r: number = heap.atomic((h) => { a.balance -= 1; return h.stats().commits; });
heap.begin(); heap.commit();
try { heap.atomic(() => 1); } catch (e) { if (e instanceof uniheap.ConflictError) console.log(e.code, e.errno); }
const info: uniheap.HeapInfo = heap.info();
async function waits(): Promise<void> {
  const since: bigint = heap.token(m);
  const now: bigint | null = await heap.changed(m, { since, timeout: 100, signal: AbortSignal.timeout(50) });
  const roots: bigint | null = heap.waitSync(uniheap.ROOTS, { timeout: null });
  for await (const tok of heap.watch(heap.ROOTS, { signal: new AbortController().signal })) console.log(tok);
  try { await heap.changed(p); } catch (e) { if (e instanceof uniheap.AbortError) console.log(e.code); }
  console.log(now, roots);
}
void waits;
heap[Symbol.dispose]();
console.log(owner, exact, ref, n, v, first, len, x0, r, info, uniheap.FORMAT_VERSION);
