/*
 * MapPeer.java -- the Java peer of the cross-language test of hash-map
 * values (tests/xlang_maps/test_inline_values.py, which describes the
 * protocol):
 *
 *   java --enable-native-access=ALL-UNNAMED -cp <jar> MapPeer.java \
 *       SOCKET ROOT ME [EARLIER,...]
 *
 * Checks what the earlier writers left in the hash map under ROOT, then
 * adds its own keys and overwrites the shared ones, as peer.py does. Exit
 * 0 ("peer ME: checked N values, wrote M"), 2 with every mismatch printed.
 */
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;

import org.uniheap.Heap;
import org.uniheap.PMap;

public final class MapPeer {
    private static final int NKEYS = 120;

    private MapPeer() {
    }

    /** Key i's value as lang writes it: a String for even i, a byte[] for
     * odd, of (i * 37) % 200 bytes (inline in the entry up to 128). */
    static Object value(String lang, int i) {
        int n = (i * 37) % 200, seed = lang.length();
        if (i % 2 == 0) {
            StringBuilder s = new StringBuilder(n);
            for (int j = 0; j < n; j++)
                s.append((char) (97 + (i + j + seed) % 26));
            return s.toString();
        }
        byte[] b = new byte[n];
        for (int j = 0; j < n; j++)
            b[j] = (byte) ((i * 7 + j + seed) % 256);
        return b;
    }

    static boolean same(Object got, Object want) {
        return want instanceof byte[] w ? got instanceof byte[] g && Arrays.equals(g, w)
                : want.equals(got);
    }

    static List<String> check(PMap<String, Object> m, List<String> earlier) {
        List<String> bad = new ArrayList<>();
        for (String lang : new LinkedHashSet<>(earlier))
            for (int i = 0; i < NKEYS; i++)
                if (!same(m.get(lang + "-" + i), value(lang, i)))
                    bad.add(lang + "-" + i);
        if (!earlier.isEmpty()) {
            String last = earlier.get(earlier.size() - 1);
            for (int i = 0; i < NKEYS; i++)
                if (!same(m.get("shared-" + i), value(last, i)))
                    bad.add("shared-" + i + ": not " + last + "'s");
        }
        int want = earlier.isEmpty() ? 0 : NKEYS * (new LinkedHashSet<>(earlier).size() + 1);
        if (m.size() != want)
            bad.add(m.size() + " keys, not " + want);
        return bad;
    }

    @SuppressWarnings("unchecked")
    public static void main(String[] args) {
        String root = args[1], me = args[2];
        List<String> earlier = args.length > 3 && !args[3].isEmpty()
                ? Arrays.asList(args[3].split(",")) : List.of();
        try (Heap heap = Heap.connect(Path.of(args[0]))) {
            if (heap.roots().get(root) == null)
                heap.roots().put(root, heap.newMap(String.class));
            PMap<String, Object> m = (PMap<String, Object>) heap.roots().get(root);
            List<String> bad = check(m, earlier);
            int checked = m.size();
            for (String line : bad)
                System.out.println("peer " + me + ": MISMATCH " + line);
            if (!bad.isEmpty())
                System.exit(2);
            for (int i = 0; i < NKEYS; i++) {
                m.set(me + "-" + i, value(me, i));
                m.set("shared-" + i, value(me, i));
            }
            System.out.println("peer " + me + ": checked " + checked + " values, wrote "
                    + 2 * NKEYS);
        }
    }
}
