package org.uniheap.test;

import org.uniheap.Inline;
import org.uniheap.PObject;
import org.uniheap.Persistent;

/** Inline fields (FORMAT.md 3.2): the layout of the C test's InlineRec. */
@Persistent("t.inline.JRec")
public interface InlineRec extends PObject {
    long key();
    void key(long v);
    @Inline(10) byte[] blob();
    void blob(byte[] v);
    byte flag();
    void flag(byte v);
    @Inline(5) String text();
    void text(String v);
}
