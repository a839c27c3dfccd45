package org.uniheap.test;

import org.uniheap.PObject;
import org.uniheap.Persistent;

/** A bank account; the same layout as the Python tests' bank.Account. */
@Persistent("jt.Account")
public interface Account extends PObject {
    String owner();
    void owner(String owner);
    long balance();
    void balance(long balance);

    default void deposit(long amount) {
        balance(balance() + amount);
    }
}
