package org.uniheap.test;

import org.uniheap.PObject;
import org.uniheap.Persistent;

/** The Python binding's tests' bank account (bankdefs.py): the same class. */
@Persistent("t.bank.Account")
public interface BankAccount extends PObject {
    long balance();
    void balance(long v);
    String owner();
    void owner(String v);
}
