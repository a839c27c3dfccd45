package org.uniheap.test;

import org.uniheap.PObject;
import org.uniheap.Persistent;

/** The record bindings-python/tests/workers/record_writer.py rewrites: same
 * class name, fields and order, so the same heap class. */
@Persistent("t.mp.Rec")
public interface MpRec extends PObject {
    long a();
    void a(long v);
    String name();
    void name(String v);
    int b();
    void b(int v);
    byte[] data();
    void data(byte[] v);
    long c();
    void c(long v);

    /** record_writer.py's text(i). */
    static String text(long i) {
        return i + ":" + String.valueOf((char) (65 + i % 26)).repeat((int) (i % 61));
    }

    /** record_writer.py's blob(i). */
    static byte[] blob(long i) {
        return text(i).repeat(3).getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }
}
