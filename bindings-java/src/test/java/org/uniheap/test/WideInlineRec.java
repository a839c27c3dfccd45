package org.uniheap.test;

import org.uniheap.Inline;
import org.uniheap.PObject;
import org.uniheap.Persistent;

/** Inline fields only, spanning more bytes than a session's scratch holds
 * (fieldValues then reads them into an array of its own). */
@Persistent("t.inline.JWide")
public interface WideInlineRec extends PObject {
    long key();
    void key(long v);
    @Inline(20000) byte[] blob();
    void blob(byte[] v);
}
