package org.uniheap.bench;

import java.nio.charset.StandardCharsets;
import java.util.Random;

/**
 * The data of the map benchmark, the same for every map: keys "user<i>"
 * for i < n, each with a 100-byte printable value derived from i, and a
 * fixed random order of keys to look up.
 */
final class MapData {
    private MapData() {
    }

    static final int VALUE_LEN = 100;
    static final int LOOKUPS = 1 << 16;

    static String key(int i) {
        return "user" + i;
    }

    static byte[] value(int i) {
        byte[] v = new byte[VALUE_LEN];
        Random r = new Random(i);
        for (int j = 0; j < v.length; j++)
            v[j] = (byte) (' ' + r.nextInt(95));
        return v;
    }

    /** LOOKUPS keys drawn uniformly from n, as strings and as UTF-8 bytes. */
    static String[] lookups(int n, long seed) {
        Random r = new Random(seed);
        String[] ks = new String[LOOKUPS];
        for (int i = 0; i < ks.length; i++)
            ks[i] = key(r.nextInt(n));
        return ks;
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
