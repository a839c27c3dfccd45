/*
 * NotifyPeer.java -- the Java peer of the cross-language change-notification
 * test (tests/notify/test_pairs.py): a writer and a waiter ping-pong through
 * one NotifyCell { ping: i64, pong: i64, ts: i64 }, each side sleeping in
 * Heap.await until the other's commit. Run as a single-file source program
 * on the uniheap jar:
 *
 *   java --enable-native-access=ALL-UNNAMED -cp bindings-java/target/uniheap-<v>.jar \
 *       tests/notify/NotifyPeer.java SOCKET ROOT ROLE ROUNDS
 *
 * ROOT names the cell (created by the test; read here through the generic
 * proxy, without declaring the class). ROLE is writer or waiter.
 *  - writer, round i: in one block ts = System.nanoTime() (CLOCK_MONOTONIC)
 *    and ping = i; then wait until pong == i.
 *  - waiter, round i: wait until ping == i; latency = now - ts; pong = i.
 * Every wait takes the token before it reads and waits with that token, so
 * a commit between the read and the wait is not lost; each has a 10 s
 * bound, and running into it (a lost wake-up) exits 3. At the end:
 * "peer java ROLE: ROUNDS rounds", and for the waiter
 * "latency_us p50=X p99=Y max=Z".
 */
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;

import org.uniheap.Heap;
import org.uniheap.PObject;

public final class NotifyPeer {
    private static final Duration BOUND = Duration.ofSeconds(10);

    private NotifyPeer() {
    }

    public static void main(String[] args) {
        if (args.length != 4 || !(args[2].equals("writer") || args[2].equals("waiter"))) {
            System.err.println("usage: NotifyPeer SOCKET ROOT writer|waiter ROUNDS");
            System.exit(2);
        }
        String role = args[2];
        int rounds = Integer.parseInt(args[3]);
        try (Heap heap = Heap.connect(Path.of(args[0]))) {
            PObject cell = heap.roots().get(args[1]);
            if (cell == null) {
                System.err.println("peer java " + role + ": no root " + args[1]);
                System.exit(2);
            }
            if (role.equals("writer")) {
                write(heap, cell, rounds);
                System.out.println("peer java writer: " + rounds + " rounds");
            } else {
                long[] lat = serve(heap, cell, rounds);
                System.out.println("peer java waiter: " + rounds + " rounds");
                System.out.println(summary(lat));
            }
        }
    }

    private static void write(Heap heap, PObject cell, int rounds) {
        for (long i = 1; i <= rounds; i++) {
            long round = i;
            heap.atomic(() -> {
                cell.setField("ts", System.nanoTime());
                cell.setField("ping", round);
            });
            waitUntil(heap, cell, "pong", i, "writer");
        }
    }

    private static long[] serve(Heap heap, PObject cell, int rounds) {
        long[] lat = new long[rounds];
        for (long i = 1; i <= rounds; i++) {
            waitUntil(heap, cell, "ping", i, "waiter");
            lat[(int) i - 1] = System.nanoTime() - (Long) cell.getField("ts");
            cell.setField("pong", i);
        }
        return lat;
    }

    /* Token first, then read, then wait with that token. */
    private static void waitUntil(Heap heap, PObject cell, String field, long want, String role) {
        for (;;) {   // bound: each wait has BOUND, and running into it exits
            long tok = heap.token(cell);
            if ((Long) cell.getField(field) == want)
                return;
            if (heap.await(cell, tok, BOUND).isEmpty()) {
                System.err.println("peer java " + role + ": round " + want + ": no wake-up within "
                        + BOUND.toSeconds() + " s (" + field + " = " + cell.getField(field) + ")");
                System.exit(3);
            }
        }
    }

    private static String summary(long[] lat) {
        long[] s = lat.clone();
        Arrays.sort(s);
        return String.format(Locale.ROOT, "latency_us p50=%.1f p99=%.1f max=%.1f",
                rank(s, 50) / 1e3, rank(s, 99) / 1e3, s.length == 0 ? 0 : s[s.length - 1] / 1e3);
    }

    /* Nearest-rank percentile of sorted values. */
    private static double rank(long[] s, int pct) {
        if (s.length == 0)
            return 0;
        int k = (int) Math.ceil(pct / 100.0 * s.length);
        return s[Math.max(0, k - 1)];
    }
}
