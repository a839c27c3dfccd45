package org.uniheap.ycsb.uniheap;

import java.util.Map;
import java.util.Set;

import org.uniheap.Inline;
import org.uniheap.PObject;
import org.uniheap.Persistent;
import org.uniheap.RecordImage;

import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;

/**
 * A YCSB record in uniheap: class {@code ycsb.Record}, ten inline bytes
 * fields of capacity 100 (YCSB's default fieldlength; FORMAT.md 3.2: the
 * values live in the record, one object per record), the same class the
 * Python and Node bindings declare (see bench/ycsb/README.md, "One table,
 * every language").
 */
@Persistent("ycsb.Record")
public interface Record extends PObject {
  /** Each field's capacity in bytes. */
  int CAPACITY = 100;

  @Inline(CAPACITY)
  byte[] field0();

  void field0(byte[] v);

  @Inline(CAPACITY)
  byte[] field1();

  void field1(byte[] v);

  @Inline(CAPACITY)
  byte[] field2();

  void field2(byte[] v);

  @Inline(CAPACITY)
  byte[] field3();

  void field3(byte[] v);

  @Inline(CAPACITY)
  byte[] field4();

  void field4(byte[] v);

  @Inline(CAPACITY)
  byte[] field5();

  void field5(byte[] v);

  @Inline(CAPACITY)
  byte[] field6();

  void field6(byte[] v);

  @Inline(CAPACITY)
  byte[] field7();

  void field7(byte[] v);

  @Inline(CAPACITY)
  byte[] field8();

  void field8(byte[] v);

  @Inline(CAPACITY)
  byte[] field9();

  void field9(byte[] v);

  /** Every field, as YCSB's read returns them (readallfields). */
  static void readAll(Record r, Map<String, ByteIterator> out) {
    out.put("field0", new ByteArrayByteIterator(r.field0()));
    out.put("field1", new ByteArrayByteIterator(r.field1()));
    out.put("field2", new ByteArrayByteIterator(r.field2()));
    out.put("field3", new ByteArrayByteIterator(r.field3()));
    out.put("field4", new ByteArrayByteIterator(r.field4()));
    out.put("field5", new ByteArrayByteIterator(r.field5()));
    out.put("field6", new ByteArrayByteIterator(r.field6()));
    out.put("field7", new ByteArrayByteIterator(r.field7()));
    out.put("field8", new ByteArrayByteIterator(r.field8()));
    out.put("field9", new ByteArrayByteIterator(r.field9()));
  }

  /** The field names, in the class's order. */
  String[] NAMES = {"field0", "field1", "field2", "field3", "field4",
                    "field5", "field6", "field7", "field8", "field9"};

  /** Every field of a record's image (field0..field9, in order), as YCSB's
   * read returns them: slices of the image's one array. */
  static void readAll(RecordImage r, Map<String, ByteIterator> out) {
    byte[] b = r.array();
    for (int i = 0; i < NAMES.length; i++) {
      out.put(NAMES[i], new ByteArrayByteIterator(b, r.offset(i), r.length(i)));
    }
  }

  /** The named fields of a record's image (field0..field9, in order), as
   * YCSB's read returns them. */
  static void readSome(RecordImage r, Set<String> fields, Map<String, ByteIterator> out) {
    byte[] b = r.array();
    for (String f : fields) {
      int i = index(f);
      if (i >= 0) {
        out.put(f, new ByteArrayByteIterator(b, r.offset(i), r.length(i)));
      }
    }
  }

  /** i for "fieldI" (0..9), else -1. */
  static int index(String field) {
    if (field.length() != 6 || !field.startsWith("field")) {
      return -1;
    }
    int i = field.charAt(5) - '0';
    return i >= 0 && i <= 9 ? i : -1;
  }

  /** Field {@code fieldN} by name, through the typed accessors. */
  static byte[] get(Record r, String field) {
    switch (field) {
    case "field0": return r.field0();
    case "field1": return r.field1();
    case "field2": return r.field2();
    case "field3": return r.field3();
    case "field4": return r.field4();
    case "field5": return r.field5();
    case "field6": return r.field6();
    case "field7": return r.field7();
    case "field8": return r.field8();
    case "field9": return r.field9();
    default: return (byte[]) r.getField(field);
    }
  }

  static void set(Record r, String field, byte[] v) {
    switch (field) {
    case "field0": r.field0(v); break;
    case "field1": r.field1(v); break;
    case "field2": r.field2(v); break;
    case "field3": r.field3(v); break;
    case "field4": r.field4(v); break;
    case "field5": r.field5(v); break;
    case "field6": r.field6(v); break;
    case "field7": r.field7(v); break;
    case "field8": r.field8(v); break;
    case "field9": r.field9(v); break;
    default: r.setField(field, v);
    }
  }
}
