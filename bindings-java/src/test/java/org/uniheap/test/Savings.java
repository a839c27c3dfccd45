package org.uniheap.test;

import org.uniheap.Persistent;

/** Inherits Account's fields, then its own. */
@Persistent("jt.Savings")
public interface Savings extends Account {
    double rate();
    void rate(double rate);
}
