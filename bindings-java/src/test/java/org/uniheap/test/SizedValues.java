package org.uniheap.test;

import java.nio.charset.StandardCharsets;

/**
 * String and byte[] values of a given length in bytes, their content
 * derived from a seed, so that a reader (in this JVM or in
 * src/test/python/java_xlang.py, which makes the same ones) can tell which
 * value it has.
 */
final class SizedValues {
    private SizedValues() {
    }

    /** Lengths on either side of the largest value a hash map keeps in its
     * entry (128 bytes): 0, 1 and 128 inline, 129 and 5000 objects. */
    static final int[] LENGTHS = {0, 1, 128, 129, 5000};

    /** n bytes, byte i being i * 31 + seed. */
    static byte[] bytes(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++)
            b[i] = (byte) (i * 31 + seed);
        return b;
    }

    /** A String whose UTF-8 is n bytes: n / 2 two-byte 'ü's, then tail
     * (ASCII) when n is odd. */
    static String string(int n, char tail) {
        String s = "ü".repeat(n / 2) + (n % 2 == 1 ? String.valueOf(tail) : "");
        if (s.getBytes(StandardCharsets.UTF_8).length != n)
            throw new IllegalArgumentException("tail must be ASCII: " + tail);
        return s;
    }
}
