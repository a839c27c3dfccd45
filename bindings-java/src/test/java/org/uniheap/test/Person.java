package org.uniheap.test;

import org.uniheap.PObject;
import org.uniheap.Persistent;

/** The same class as the Python binding's tests' pyx.Person: one class in the heap. */
@Persistent("pyx.Person")
public interface Person extends PObject {
    String name();
    void name(String v);
    int age();
    void age(int v);
    double score();
    void score(double v);
    boolean active();
    void active(boolean v);
    byte[] tag();
    void tag(byte[] v);
    Person friend();
    void friend(Person v);
    byte level();
    void level(byte v);
    short rank();
    void rank(short v);
    float weight();
    void weight(float v);
    long id();
    void id(long v);
}
