/*
 * GcPeer.java -- the Java participant of the cross-language GC model test
 * (tests/gc_model/test_languages.py; the protocol is prog_gc_model.c's,
 * described in test_languages.py). It declares a persistent interface, so
 * it is compiled with the binding's annotation processor (javac -proc:full,
 * which the test does) rather than run as a source program:
 *
 *   java --enable-native-access=ALL-UNNAMED -cp <jar>:<classes> GcPeer \
 *       SOCKET ID NPROC SECONDS SEED
 *
 * Builds chains of gcm.Node under its keys "w<ID>.k<K>" of the map at root
 * "gcm.map", holds some chains' heads as proxies in an array (the proxy is
 * the pin, released by the binding's Cleaner once the JVM collects it: no
 * explicit pin in Java), drops them, re-links its heads' `other` to any
 * participant's chain, removes keys and reads other participants' chains in
 * blocks, for SECONDS seconds, while heapd's collector runs cycles back to
 * back. Every chain it holds or keeps under its keys is checked (outside any
 * block) for being exactly the one it built, and one hop along `other` for
 * being whole: a FreedObjectException or a wrong tag, length or payload
 * there means the collector took something live.
 *
 * Exit 0 when done (prints its counters), 1 on an unexpected error (a full
 * heap included), 2 when something live was found freed or torn.
 */
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;

import org.uniheap.ConflictException;
import org.uniheap.FreedObjectException;
import org.uniheap.Heap;
import org.uniheap.HeapStats;
import org.uniheap.PMap;
import org.uniheap.PObject;
import org.uniheap.Persistent;
import org.uniheap.UniheapException;

public final class GcPeer {
    private static final int NKEYS = 64, NHELD = 32, PAY_MAX = 47;

    @Persistent("gcm.Node")
    public interface Node extends PObject {
        Node next();      void next(Node v);
        Node other();     void other(Node v);
        long tag();       void tag(long v);
        long rest();      void rest(long v);
        byte[] pay();     void pay(byte[] v);
    }

    /** A chain that is not whole, or not the one expected. */
    static final class Torn extends RuntimeException {
        Torn(String what) {
            super(what);
        }
    }

    /** A chain a participant built: its first tag and its length. */
    record Want(long base, int n) {
    }

    /** A head held through its proxy, and the chain it must be. */
    record Held(Node head, Want want) {
    }

    private final Heap heap;
    private final int me, nproc;
    private final Random rnd;
    private final PMap<String, Object> map;
    private final Want[] own = new Want[NKEYS];
    private final Held[] held = new Held[NHELD];
    private long nBuild, nHold, nRelink, nRemove, nVerify, nPeekConflicts, nPeekFreed;

    @SuppressWarnings("unchecked")
    private GcPeer(Heap heap, int me, int nproc, long seed) {
        this.heap = heap;
        this.me = me;
        this.nproc = nproc;
        this.rnd = new Random(seed * 1000003 + me);
        this.map = (PMap<String, Object>) heap.roots().get("gcm.map");
    }

    static byte[] payloadOf(long tag) {
        byte[] b = new byte[1 + (int) (tag % PAY_MAX)];
        for (int j = 0; j < b.length; j++)
            b[j] = (byte) ((tag % 251 + 37L * j) % 256);
        return b;
    }

    private static Node node(Object o) {
        return o == null ? null : o instanceof Node n ? n : ((PObject) o).as(Node.class);
    }

    /* Throws Torn unless the chain at head is whole (and, with want, the
     * one it names); FreedObjectException propagates. */
    static void checkChain(Node head, Want want) {
        long base = 0;
        Node node = head;
        for (int i = 0; node != null; i++) {   // bound: rest counts down, i <= 4
            long tag = node.tag(), rest = node.rest();
            Node next = node.next();
            byte[] pay = node.pay();
            if (i == 0) {
                base = tag;
                if (want != null && (base != want.base() || rest != want.n() - 1))
                    throw new Torn("head " + head.ref() + ": tag " + tag + " rest " + rest + ", want " + want);
            }
            if (tag != base + i || (rest == 0) != (next == null) || i > 4)
                throw new Torn("node " + i + " of " + head.ref() + ": tag " + tag + " rest " + rest
                        + " (base " + base + ")");
            if (!Arrays.equals(pay, payloadOf(tag)))
                throw new Torn("node " + i + " of " + head.ref() + ": payload " + Arrays.toString(pay));
            node = next;
        }
    }

    private static String key(int w, int k) {
        return "w" + w + ".k" + k;
    }

    private void build(long step) {
        int k = rnd.nextInt(NKEYS), n = 1 + rnd.nextInt(4);
        long base = (long) me << 40 | step << 8;
        heap.atomic(() -> {
            Node next = null;
            for (int i = n - 1; i >= 0; i--) {
                Node nd = heap.create(Node.class);
                nd.next(next);
                nd.tag(base + i);
                nd.rest(n - 1 - i);
                nd.pay(payloadOf(base + i));
                next = nd;
            }
            map.set(key(me, k), next);
        });
        own[k] = new Want(base, n);
        nBuild++;
    }

    private void hold() {
        int k = rnd.nextInt(NKEYS), i = rnd.nextInt(NHELD);
        if (own[k] == null)
            return;
        held[i] = new Held(node(map.get(key(me, k))), own[k]);
        nHold++;
    }

    private void unhold() {
        held[rnd.nextInt(NHELD)] = null;   // the pin goes when the JVM collects the proxy
    }

    private void relink() {
        int k = rnd.nextInt(NKEYS), w2 = rnd.nextInt(nproc), k2 = rnd.nextInt(NKEYS);
        if (own[k] == null)
            return;
        heap.atomic(() -> {
            Node head = node(map.get(key(me, k)));
            Node target = node(map.get(key(w2, k2)));
            if (target != null)
                head.other(target);
        });
        nRelink++;
    }

    private void remove() {
        int k = rnd.nextInt(NKEYS);
        if (own[k] == null)
            return;
        heap.atomic(() -> {   // conflicts re-run
            map.remove(key(me, k));
        });
        own[k] = null;
        nRemove++;
    }

    private void peek() {
        int w = rnd.nextInt(nproc), k = rnd.nextInt(NKEYS);
        try {
            heap.atomic(() -> {
                Node head = node(map.get(key(w, k)));
                if (head != null)
                    checkChain(head, null);
            });
        } catch (ConflictException e) {
            nPeekConflicts++;
        } catch (FreedObjectException e) {
            // Replaced, and collected, after the block read its key: the
            // block could not have committed either (a chain still under
            // its key is its owner's to find freed).
            nPeekFreed++;
        }
    }

    private void verifyLive(String what, Node head, Want want) {
        try {
            checkChain(head, want);
            Node other = head.other();
            if (other != null)
                checkChain(other, null);
        } catch (Torn | FreedObjectException e) {
            System.err.println("peer java " + me + ": " + what + " chain " + want + ": " + e);
            System.exit(2);
        }
    }

    private void verify() {
        for (Held h : held)
            if (h != null)
                verifyLive("held", h.head(), h.want());
        for (int k = 0; k < NKEYS; k++)
            if (own[k] != null)
                verifyLive("own key's", node(map.get(key(me, k))), own[k]);
        nVerify++;
    }

    private long run(double seconds) {
        long stop = System.nanoTime() + (long) (seconds * 1e9);
        long step = 0;
        while (step % 64 != 0 || System.nanoTime() < stop) {   // bound: the time
            step++;
            int r = rnd.nextInt(100);
            if (r < 40)
                build(step);
            else if (r < 55)
                hold();
            else if (r < 62)
                unhold();
            else if (r < 72)
                relink();
            else if (r < 80)
                remove();
            else if (r < 92)
                peek();
            else
                verify();
        }
        verify();
        return step;
    }

    public static void main(String[] args) {
        if (args.length != 5) {
            System.err.println("usage: GcPeer SOCKET ID NPROC SECONDS SEED");
            System.exit(1);
        }
        int me = Integer.parseInt(args[1]);
        try (Heap heap = Heap.connect(Path.of(args[0]))) {
            heap.maxTries(1000);    // a block's tries: test_languages.py, "Tries"
            GcPeer p = new GcPeer(heap, me, Integer.parseInt(args[2]), Long.parseLong(args[4]));
            long steps = p.run(Double.parseDouble(args[3]));
            HeapStats st = heap.stats();
            System.out.println("peer java " + me + ": steps=" + steps + " build=" + p.nBuild + " hold="
                    + p.nHold + " relink=" + p.nRelink + " remove=" + p.nRemove + " verify=" + p.nVerify
                    + " peek_conflicts=" + p.nPeekConflicts + " peek_freed=" + p.nPeekFreed
                    + " gc_cycles=" + st.gcCycles() + " pins=" + st.pins());
        } catch (Torn e) {
            System.err.println("peer java " + me + ": torn chain read in a block: " + e.getMessage());
            System.exit(2);
        } catch (UniheapException e) {
            System.err.println("peer java " + me + ": " + e);
            System.exit(1);
        }
    }
}
