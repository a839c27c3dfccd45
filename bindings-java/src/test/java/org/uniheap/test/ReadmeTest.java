package org.uniheap.test;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.uniheap.Heap;
import org.uniheap.PList;
import org.uniheap.PObject;
import org.uniheap.Persistent;

/** The tour of bindings-java/README.md, as written there. */
class ReadmeTest extends HeapTest {
    @Persistent("bank.Account")
    public interface Account extends PObject {
        String owner();          void owner(String owner);
        long balance();          void balance(long balance);
        PList<Long> history();   void history(PList<Long> history);

        default void deposit(long amount) { balance(balance() + amount); }
    }

    /** The account under root `owner`, created and published in one atomic step. */
    static Account account(Heap heap, String owner) {
        return heap.atomic(() -> {
            Account a = heap.root(owner, Account.class);
            if (a == null) {
                a = heap.create(Account.class);
                a.owner(owner);
                a.history(heap.newList());
                heap.roots().put(owner, a);     // durable name -> object
            }
            return a;
        });
    }

    @Test
    void tour() {
        for (int run = 0; run < 2; run++) {
            try (Heap heap = Heap.connect(heapd.socket)) {
                Account ada = account(heap, "ada"), bob = account(heap, "bob");
                heap.atomic(() -> {
                    ada.balance(ada.balance() - 10);
                    bob.deposit(10);
                    ada.history().add(-10L);
                });
            }
        }
        Account ada = account(heap, "ada");
        assertEquals(-20, ada.balance());
        assertEquals(20, account(heap, "bob").balance());
        assertEquals(List.of(-10L, -10L), ada.history());
    }
}
