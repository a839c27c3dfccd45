package org.uniheap.bench;

import org.uniheap.PObject;
import org.uniheap.Persistent;

/** The persistent class of the field benchmark. */
@Persistent("bench.Point")
public interface Point extends PObject {
    long x();
    void x(long v);
    long y();
    void y(long v);
}
