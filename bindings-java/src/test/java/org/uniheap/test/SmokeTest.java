package org.uniheap.test;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;

class SmokeTest extends HeapTest {
    @Test
    void createReadWrite() {
        Account a = heap.create(Account.class);
        a.owner("ada");
        a.balance(100);
        a.deposit(5);
        assertEquals("ada", a.owner());
        assertEquals(105, a.balance());
        heap.roots().put("smoke.ada", a);
        Account b = heap.root("smoke.ada", Account.class);
        assertEquals(a, b);
        assertEquals(105, b.balance());
        System.out.println(a + " " + heap.info() + " " + heap.stats());
    }
}
