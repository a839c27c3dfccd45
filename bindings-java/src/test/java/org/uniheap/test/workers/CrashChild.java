package org.uniheap.test.workers;

import java.nio.file.Files;
import java.nio.file.Path;

import org.uniheap.Block;
import org.uniheap.Heap;
import org.uniheap.PList;
import org.uniheap.test.BankAccount;

/**
 * Dies, by the test's SIGKILL, in the middle of a block. Usage: CrashChild
 * READYFILE — in a block it writes accounts 0 and 1 (666, 667, owner
 * "dead"), allocates an account and publishes it as root "t.crash.ghost",
 * then creates READYFILE and sleeps, never committing.
 */
public final class CrashChild {
    private CrashChild() {
    }

    public static void main(String[] args) throws Exception {
        Heap heap = Heap.connect();
        PList<?> list = heap.roots().get("t.bank.accounts").as(PList.class);
        BankAccount a = ((org.uniheap.PObject) list.get(0)).as(BankAccount.class);
        BankAccount b = ((org.uniheap.PObject) list.get(1)).as(BankAccount.class);
        Block blk = heap.begin();
        a.balance(666);
        b.balance(667);
        a.owner("dead");
        BankAccount ghost = heap.create(BankAccount.class);
        ghost.balance(1);
        heap.roots().put("t.crash.ghost", ghost);
        Files.createFile(Path.of(args[0]));
        Thread.sleep(600_000);
        blk.commit();
    }
}
