package org.uniheap;

import java.util.Arrays;
import java.util.HexFormat;

/**
 * An immutable byte string: the key type of maps keyed by bytes (a
 * {@code byte[]} cannot be a map key in Java: its equals is identity).
 * Equal when the bytes are equal; ordered bytewise, unsigned, as sorted
 * maps order bytes keys.
 */
public final class Bytes implements Comparable<Bytes> {
    private final byte[] data;
    private int hash;

    private Bytes(byte[] data) {
        this.data = data;
    }

    /** The bytes of {@code data} (copied). */
    public static Bytes of(byte... data) {
        return new Bytes(data.clone());
    }

    /** The UTF-8 bytes of {@code s}. */
    public static Bytes utf8(String s) {
        return new Bytes(s.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    static Bytes wrap(byte[] data) {
        return new Bytes(data);
    }

    byte[] raw() {
        return data;
    }

    /** A copy of the bytes. */
    public byte[] toArray() {
        return data.clone();
    }

    /** Number of bytes. */
    public int length() {
        return data.length;
    }

    /** Byte at index i. */
    public byte get(int i) {
        return data[i];
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Bytes b && Arrays.equals(data, b.data);
    }

    @Override
    public int hashCode() {
        int h = hash;
        if (h == 0)
            hash = h = Arrays.hashCode(data) | 1;
        return h;
    }

    @Override
    public int compareTo(Bytes o) {
        return Arrays.compareUnsigned(data, o.data);
    }

    /** Hex digits, e.g. {@code Bytes[00ff10]}. */
    @Override
    public String toString() {
        return "Bytes[" + HexFormat.of().formatHex(data) + "]";
    }
}
