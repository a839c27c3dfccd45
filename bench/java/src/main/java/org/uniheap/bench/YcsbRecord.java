package org.uniheap.bench;

import org.uniheap.PObject;
import org.uniheap.Persistent;

/** YCSB's record as bench/ycsb keeps it in uniheap: class ycsb.Record,
 *  ten bytes fields. */
@Persistent("ycsb.Record")
public interface YcsbRecord extends PObject {
    byte[] field0();
    void field0(byte[] v);
    byte[] field1();
    void field1(byte[] v);
    byte[] field2();
    void field2(byte[] v);
    byte[] field3();
    void field3(byte[] v);
    byte[] field4();
    void field4(byte[] v);
    byte[] field5();
    void field5(byte[] v);
    byte[] field6();
    void field6(byte[] v);
    byte[] field7();
    void field7(byte[] v);
    byte[] field8();
    void field8(byte[] v);
    byte[] field9();
    void field9(byte[] v);
}
