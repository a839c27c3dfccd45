/*
 * GrowPeer.java -- the Java writer or reader of the cross-language growth
 * test (tests/grow/test_growth.py; the protocol is
 * tests/c/prog_grow_fill.c's, as peer.py describes it). It declares a
 * persistent interface, so it is compiled with the binding's annotation
 * processor (javac -proc:full, which the test does):
 *
 *   java --enable-native-access=ALL-UNNAMED -cp <jar>:<classes> GrowPeer \
 *       SOCKET write ID BLOCKS [FIRST] | SOCKET read WRITERS DIR
 *
 * write: "ready" once connected, then (if $UH_GROW_GO names a file, once it
 * exists) blocks FIRST..BLOCKS-1 of 200 GrowFill records, block k under the
 * root "w<ID>.<k>"; prints "blocks N" (acknowledged in all); exit 0, 3
 * after HeapFull, 1 after another error. read: read-only; prints "ready"
 * once connected, follows and checks every writer's blocks until DIR/done
 * exists, then one more pass; prints "read N"; exit 0, or 2 if a check
 * failed.
 */
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.uniheap.Heap;
import org.uniheap.HeapFullException;
import org.uniheap.PObject;
import org.uniheap.Persistent;
import org.uniheap.UniheapException;

public final class GrowPeer {
    private static final int REC = 200;

    @Persistent("GrowFill")
    public interface GrowFill extends PObject {
        long value();     void value(long v);
        GrowFill next();  void next(GrowFill v);
        long a();         void a(long v);
        long b();         void b(long v);
        long c();         void c(long v);
        long d();         void d(long v);
    }

    private GrowPeer() {
    }

    static long value(int me, long k, int i) {
        return me * 1_000_000_000L + k * 1000 + i;
    }

    /** Connected: say so, then wait for $UH_GROW_GO (a file), if set. */
    static void waitGo() throws InterruptedException {
        System.out.println("ready");
        System.out.flush();
        String go = System.getenv("UH_GROW_GO");
        while (go != null && !Files.exists(Path.of(go)))
            Thread.sleep(5);
    }

    static int write(Heap heap, int me, long blocks, long first) throws InterruptedException {
        waitGo();
        Map<String, PObject> roots = heap.roots();
        long k = first;
        try {
            for (; k < blocks; k++) {
                final long kk = k;
                heap.atomic(() -> {
                    GrowFill prev = null;
                    for (int i = 0; i < REC; i++) {
                        final GrowFill p = prev;
                        final long v = value(me, kk, i);
                        prev = heap.create(GrowFill.class, g -> {
                            g.value(v);
                            g.next(p);
                        });
                    }
                    roots.put("w" + me + "." + kk, prev);
                });
            }
        } catch (HeapFullException e) {
            System.out.println("blocks " + k + "\nfull: " + e.getMessage());
            return 3;
        } catch (UniheapException e) {
            System.out.println("blocks " + k);
            System.err.println("writer " + me + ", block " + k + ": " + e);
            return 1;
        }
        System.out.println("blocks " + k);
        return 0;
    }

    /** true: block k of writer w is published and whole; false: not yet. */
    static boolean readBlock(Map<String, PObject> roots, int w, long k) {
        PObject o = roots.get("w" + w + "." + k);
        if (o == null)
            return false;
        int n = 0;
        for (; o != null && n <= REC; n++) {
            long want = value(w, k, REC - 1 - n);
            long got = (Long) o.getField("value");
            if (got != want)
                throw new IllegalStateException("w" + w + "." + k + " record " + n + ": " + got
                        + ", want " + want);
            o = (PObject) o.getField("next");
        }
        if (n != REC)
            throw new IllegalStateException("w" + w + "." + k + ": " + n + " records");
        return true;
    }

    static int read(Heap heap, int writers, Path done) throws InterruptedException {
        System.out.println("ready");
        System.out.flush();
        Map<String, PObject> roots = heap.roots();
        long[] next = new long[writers];
        long total = 0;
        for (boolean last = false; !last;) {
            last = Files.exists(done);
            for (int w = 0; w < writers; w++) {
                while (readBlock(roots, w, next[w])) {
                    next[w]++;
                    total++;
                }
            }
            if (!last)
                Thread.sleep(2);
        }
        System.out.println("read " + total);
        return 0;
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 4 || !(args[1].equals("write") || args[1].equals("read"))) {
            System.err.println("usage: GrowPeer SOCKET write ID BLOCKS [FIRST] | read WRITERS DIR");
            System.exit(2);
        }
        boolean reader = args[1].equals("read");
        int rc;
        try (Heap heap = reader ? Heap.connect(Path.of(args[0]), Heap.Option.READ_ONLY)
                : Heap.connect(Path.of(args[0]))) {
            if (!reader)
                rc = write(heap, Integer.parseInt(args[2]), Long.parseLong(args[3]),
                        args.length > 4 ? Long.parseLong(args[4]) : 0);
            else {
                try {
                    rc = read(heap, Integer.parseInt(args[2]), Path.of(args[3], "done"));
                } catch (IllegalStateException | UniheapException e) {
                    System.err.println("reader: " + e);
                    rc = 2;
                }
            }
        }
        System.out.flush();
        System.exit(rc);
    }
}
