package org.uniheap.test;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.uniheap.PList;
import org.uniheap.PObject;
import org.uniheap.test.workers.BankWorker;
import org.uniheap.test.workers.CrashChild;

/** Several JVMs and Python processes on one bank; a JVM killed in a block. */
class MultiProcessTest extends HeapTest {
    private static final int N = 8;
    private static final long START = 1000;

    private List<BankAccount> makeBank() {
        return heap.atomic(() -> {
            List<PObject> accts = new ArrayList<>();
            for (int i = 0; i < N; i++) {
                int id = i;
                accts.add(heap.create(BankAccount.class, a -> {
                    a.balance(START);
                    a.owner("acct" + id);
                }));
            }
            PList<PObject> l = heap.newList(accts);
            heap.roots().put("t.bank.accounts", l);
            return accts.stream().map(p -> p.as(BankAccount.class)).toList();
        });
    }

    /** Final balances implied by the acknowledged transfers of ack files. */
    private static long[] replay(List<Path> acks) throws Exception {
        long[] want = new long[N];
        java.util.Arrays.fill(want, START);
        for (Path p : acks) {
            byte[] data = Files.readAllBytes(p);
            assertEquals(0, data.length % 64, p + ": torn record");
            for (int i = 0; i < data.length; i += 64) {
                String[] w = new String(data, i, 64, StandardCharsets.US_ASCII).trim().split(" ");
                if (!w[0].equals("A") || w[6].equals("0"))
                    continue;
                int src = Integer.parseInt(w[3]), dst = Integer.parseInt(w[4]);
                long amount = Long.parseLong(w[5]);
                want[src] -= amount;
                want[dst] += amount;
            }
        }
        return want;
    }

    @Test
    void jvmsAndPythonShareABank() throws Exception {
        List<BankAccount> accts = makeBank();
        Path go = heapd.dir.resolve("go");
        List<Process> procs = new ArrayList<>();
        List<Path> acks = new ArrayList<>();
        for (int w = 0; w < 3; w++) {
            Path ack = heapd.dir.resolve("ack-java-" + w);
            acks.add(ack);
            procs.add(Heapd.spawn(Procs.jvm(BankWorker.class, "" + w, "400", ack.toString(), "" + (w + 1),
                    go.toString()), heapd.dir.resolve("java-" + w + ".log"), Procs.env(heapd)));
        }
        Path pyAck = heapd.dir.resolve("ack-py");
        acks.add(pyAck);
        procs.add(Heapd.spawn(Procs.python(Procs.pyWorker("bank_worker.py"), "9", "400", "60", pyAck.toString(),
                "9", "fn", go.toString()), heapd.dir.resolve("py.log"), Procs.env(heapd)));
        Thread.sleep(300);
        Files.createFile(go);
        for (Process p : procs) {
            assertTrue(p.waitFor(120, TimeUnit.SECONDS), "a worker did not finish");
            assertEquals(0, p.exitValue(), "worker failed; logs in " + heapd.dir + "\n"
                    + Files.readString(heapd.dir.resolve("py.log")));
        }
        long[] want = replay(acks);
        long total = 0;
        for (int i = 0; i < N; i++) {
            assertEquals(want[i], accts.get(i).balance(), "account " + i);
            total += accts.get(i).balance();
        }
        assertEquals(N * START, total);
        heap.check();
    }

    @Test
    void jvmKilledInABlockIsRolledBack() throws Exception {
        List<BankAccount> accts = makeBank();
        Path ready = heapd.dir.resolve("ready");
        Process child = Heapd.spawn(Procs.jvm(CrashChild.class, ready.toString()), heapd.dir.resolve("crash.log"),
                Procs.env(heapd));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!Files.exists(ready) && System.nanoTime() < deadline && child.isAlive())
            Thread.sleep(10);
        assertTrue(Files.exists(ready), Files.readString(heapd.dir.resolve("crash.log")));
        // the child holds the locks of accounts 0 and 1: a writer waits or loses
        Path go = heapd.dir.resolve("go2"), ack = heapd.dir.resolve("ack-after");
        Process worker = Heapd.spawn(Procs.jvm(BankWorker.class, "1", "200", ack.toString(), "5", go.toString()),
                heapd.dir.resolve("worker.log"), Procs.env(heapd));
        child.destroyForcibly().waitFor();     // SIGKILL inside the block
        Files.createFile(go);
        assertTrue(worker.waitFor(120, TimeUnit.SECONDS));
        assertEquals(0, worker.exitValue(), Files.readString(heapd.dir.resolve("worker.log")));
        assertNull(heap.roots().get("t.crash.ghost"));
        assertNotEquals("dead", accts.get(0).owner());
        long[] want = replay(List.of(ack));
        long total = 0;
        for (int i = 0; i < N; i++) {
            assertEquals(want[i], accts.get(i).balance(), "account " + i);
            total += accts.get(i).balance();
        }
        assertEquals(N * START, total);
    }
}
