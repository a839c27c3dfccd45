package org.uniheap.ycsb;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;

/**
 * The byte encoding of a record for the stores that keep bytes (LMDB,
 * Chronicle Map), the same in the Python and Node ports, so that one
 * language can read what another wrote:
 *
 * <pre>
 *   repeated, in field order:  u16 LE name length | name (UTF-8)
 *                              u32 LE value length | value
 * </pre>
 */
public final class RecordCodec {
  private RecordCodec() {
  }

  /** The record's fields as bytes, in the map's order. */
  public static Map<String, byte[]> toBytes(Map<String, ByteIterator> values) {
    Map<String, byte[]> out = new LinkedHashMap<>(values.size() * 2);
    for (Map.Entry<String, ByteIterator> e : values.entrySet()) {
      out.put(e.getKey(), e.getValue().toArray());
    }
    return out;
  }

  public static int encodedSize(Map<String, byte[]> record) {
    int size = 0;
    for (Map.Entry<String, byte[]> e : record.entrySet()) {
      size += 6 + e.getKey().getBytes(StandardCharsets.UTF_8).length + e.getValue().length;
    }
    return size;
  }

  /** Writes the record at dst's position (little-endian), advancing it. */
  public static void encode(Map<String, byte[]> record, ByteBuffer dst) {
    dst.order(ByteOrder.LITTLE_ENDIAN);
    for (Map.Entry<String, byte[]> e : record.entrySet()) {
      byte[] name = e.getKey().getBytes(StandardCharsets.UTF_8);
      dst.putShort((short) name.length).put(name);
      dst.putInt(e.getValue().length).put(e.getValue());
    }
  }

  public static byte[] encode(Map<String, byte[]> record) {
    ByteBuffer b = ByteBuffer.allocate(encodedSize(record));
    encode(record, b);
    return b.array();
  }

  /** Every field of an encoded record, by name, in stored order. */
  public static Map<String, byte[]> decode(ByteBuffer src) {
    Map<String, byte[]> out = new LinkedHashMap<>(16);
    decode(src, out);
    return out;
  }

  /** Puts every field of an encoded record into out, by name, in stored
   *  order (src's position is left as it was). */
  public static void decode(ByteBuffer src, Map<String, byte[]> out) {
    ByteBuffer b = src.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    while (b.hasRemaining()) {
      byte[] name = new byte[b.getShort() & 0xffff];
      b.get(name);
      byte[] value = new byte[b.getInt()];
      b.get(value);
      out.put(new String(name, StandardCharsets.UTF_8), value);
    }
  }

  /** Puts the fields of an encoded record into result (only those in
   *  fields, unless fields is null), as YCSB's read returns them. */
  public static void decodeInto(ByteBuffer src, Set<String> fields, Map<String, ByteIterator> result) {
    ByteBuffer b = src.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    while (b.hasRemaining()) {
      byte[] name = new byte[b.getShort() & 0xffff];
      b.get(name);
      int len = b.getInt();
      String field = new String(name, StandardCharsets.UTF_8);
      if (fields == null || fields.contains(field)) {
        byte[] value = new byte[len];
        b.get(value);
        result.put(field, new ByteArrayByteIterator(value));
      } else {
        b.position(b.position() + len);
      }
    }
  }
}
