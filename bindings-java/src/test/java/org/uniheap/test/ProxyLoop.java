package org.uniheap.test;

import org.uniheap.Heap;
import org.uniheap.PList;
import org.uniheap.PMap;

/**
 * What making a proxy costs, as a plain loop (not a test; no JMH): a hash
 * map get that returns a record (a new proxy each time), and a getter that
 * follows a reference field (a new proxy each time), on a private heapd.
 * Prints the median of several rounds in ns per operation. A third loop
 * reads each of many objects once per round, after a System.gc() (not
 * timed) let the proxies of the round before die and their pins go: each
 * read makes a new proxy, the cost of a first read (the release, on the
 * unpin thread, is not timed).
 *
 * <p>Run after {@code make java-test} built the test classes:
 * {@code java --enable-native-access=ALL-UNNAMED -Duniheap.build=build
 * -cp bindings-java/target/classes:bindings-java/target/test-classes
 * org.uniheap.test.ProxyLoop [ops per round]}.
 */
public final class ProxyLoop {
    private ProxyLoop() {
    }

    public static void main(String[] args) throws Exception {
        int ops = args.length > 0 ? Integer.parseInt(args[0]) : 2_000_000;
        int keys = 1024;
        try (Heapd d = Heapd.start("64M"); Heap heap = Heap.connect(d.socket)) {
            PMap<String, Account> map = heap.atomic(() -> {
                PMap<String, Account> m = heap.newMap(String.class);
                for (int i = 0; i < keys; i++) {
                    Account a = heap.create(Account.class);
                    a.balance(i);
                    m.put("k" + i, a);
                }
                heap.roots().put("accounts", m);
                return m;
            });
            String[] names = new String[keys];
            for (int i = 0; i < keys; i++)
                names[i] = "k" + i;
            TreeNode root = heap.atomic(() -> {
                TreeNode r = heap.create(TreeNode.class);
                TreeNode l = heap.create(TreeNode.class);
                l.value(7);
                r.left(l);
                heap.roots().put("tree", r);
                return r;
            });
            report("map get of a record", median(() -> {
                long sum = 0;
                for (int i = 0; i < ops; i++)
                    sum += map.get(names[i & (keys - 1)]).balance();
                return sum;
            }, ops));
            report("ref getter", median(() -> {
                long sum = 0;
                for (int i = 0; i < ops; i++)
                    sum += root.left().value();
                return sum;
            }, ops));
            int many = 1 << 17;
            PList<Account> list = heap.newList();
            for (int i = 0; i < many; i += 1024) {
                int from = i;
                heap.atomic(() -> {
                    for (int j = from; j < from + 1024; j++) {
                        Account a = heap.create(Account.class);
                        a.balance(j);
                        list.add(a);
                    }
                });
            }
            heap.roots().put("list", list);
            report("list get, first read", median(() -> {
                long sum = 0;
                for (int i = 0; i < many; i++)
                    sum += list.get(i).balance();
                return sum;
            }, many, () -> letProxiesDie(heap)));
            System.out.println("stats: " + heap.stats());
        }
    }

    interface Loop {
        long run();
    }

    static long sink;

    /* System.gc(), then wait (at most 10 s) until the unpin thread has
     * released the pins of the dead proxies: down to the map's, the tree's
     * and the list's (a binding without pins counts none). */
    private static void letProxiesDie(Heap heap) {
        System.gc();
        for (int i = 0; i < 1000 && pins(heap) > 8; i++) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /* 0 from a binding older than pins (this loop also measures one). */
    private static long pins(Heap heap) {
        try {
            return heap.stats().pins();
        } catch (NoSuchMethodError e) {
            return 0;
        }
    }

    private static double median(Loop loop, int ops) {
        return median(loop, ops, () -> { });
    }

    /* Median ns/op of 7 rounds, after 3 warm-up rounds; before each round,
     * untimed, setup. */
    private static double median(Loop loop, int ops, Runnable setup) {
        double[] r = new double[7];
        for (int i = 0; i < 3; i++) {
            setup.run();
            sink += loop.run();
        }
        for (int i = 0; i < r.length; i++) {
            setup.run();
            long t0 = System.nanoTime();
            sink += loop.run();
            r[i] = (System.nanoTime() - t0) / (double) ops;
        }
        java.util.Arrays.sort(r);
        return r[r.length / 2];
    }

    private static void report(String what, double ns) {
        System.out.printf("%-28s %8.1f ns/op%n", what, ns);
    }
}
