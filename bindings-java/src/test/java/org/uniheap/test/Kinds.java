package org.uniheap.test;

import org.uniheap.PList;
import org.uniheap.PMap;
import org.uniheap.PObject;
import org.uniheap.Persistent;

/** One field of every kind. */
@Persistent("jt.Kinds")
public interface Kinds extends PObject {
    boolean flag();
    void flag(boolean v);
    byte tiny();
    void tiny(byte v);
    short small();
    void small(short v);
    int mid();
    void mid(int v);
    long big();
    void big(long v);
    float ratio();
    void ratio(float v);
    double w();
    void w(double v);
    String label();
    void label(String v);
    byte[] raw();
    void raw(byte[] v);
    PObject any();
    void any(PObject v);
    Kinds next();
    void next(Kinds v);
    PMap<String, Object> index();
    void index(PMap<String, Object> v);
    PList<Long> items();
    void items(PList<Long> v);
}
