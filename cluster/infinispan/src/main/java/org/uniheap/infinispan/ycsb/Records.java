package org.uniheap.infinispan.ycsb;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;

/**
 * A YCSB record (field name -> bytes) as one byte[] cache value, so that
 * every store sees the same marshalled size: i32 field count, then per
 * field i32 name length, UTF-8 name, i32 value length, value.
 */
final class Records {
    private Records() {}

    static byte[] encode(Map<String, byte[]> fields) {
        int size = Integer.BYTES;
        Map<byte[], byte[]> raw = new java.util.LinkedHashMap<>();
        for (Map.Entry<String, byte[]> e : fields.entrySet()) {
            byte[] name = e.getKey().getBytes(StandardCharsets.UTF_8);
            raw.put(name, e.getValue());
            size += 2 * Integer.BYTES + name.length + e.getValue().length;
        }
        ByteBuffer out = ByteBuffer.allocate(size).putInt(raw.size());
        raw.forEach((n, v) -> out.putInt(n.length).put(n).putInt(v.length).put(v));
        return out.array();
    }

    static Map<String, byte[]> decode(byte[] rec) {
        ByteBuffer in = ByteBuffer.wrap(rec);
        int n = in.getInt();
        Map<String, byte[]> fields = new HashMap<>(2 * n);
        for (int i = 0; i < n; i++) {
            byte[] name = new byte[in.getInt()];
            in.get(name);
            byte[] value = new byte[in.getInt()];
            in.get(value);
            fields.put(new String(name, StandardCharsets.UTF_8), value);
        }
        return fields;
    }

    static Map<String, byte[]> bytesOf(Map<String, ByteIterator> values) {
        Map<String, byte[]> out = new HashMap<>(2 * values.size());
        values.forEach((k, v) -> out.put(k, v.toArray()));
        return out;
    }

    static void copy(Map<String, byte[]> rec, Set<String> fields, Map<String, ByteIterator> out) {
        rec.forEach((k, v) -> {
            if (fields == null || fields.contains(k))
                out.put(k, new ByteArrayByteIterator(v));
        });
    }
}
