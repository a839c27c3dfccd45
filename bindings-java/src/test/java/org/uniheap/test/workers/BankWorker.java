package org.uniheap.test.workers;

import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import org.uniheap.Heap;
import org.uniheap.PObject;
import org.uniheap.test.BankAccount;

/**
 * A bank worker JVM, the Java twin of the Python binding's bank_worker.py
 * (same accounts, root and acknowledgement records).
 *
 * <p>Usage: BankWorker WID COUNT ACKFILE SEED GOFILE — transfers between the
 * accounts of the PList under root "t.bank.accounts", each in
 * heap.atomic(); before each it appends "I wid seq src dst amount", after
 * its commit "A wid seq src dst amount moved" (64-byte records). Waits for
 * GOFILE before the first transfer. Socket: $UNIHEAP_SOCKET.
 */
public final class BankWorker {
    private BankWorker() {
    }

    static void record(FileOutputStream out, String text) throws IOException {
        byte[] rec = new byte[64];
        Arrays.fill(rec, (byte) ' ');
        byte[] t = text.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(t, 0, rec, 0, t.length);
        rec[63] = '\n';
        out.write(rec);   // O_APPEND: one write per record
    }

    public static void main(String[] args) throws Exception {
        int wid = Integer.parseInt(args[0]), count = Integer.parseInt(args[1]);
        Path ack = Path.of(args[2]), go = Path.of(args[4]);
        Random rnd = new Random(Long.parseLong(args[3]));
        try (Heap heap = Heap.connect(); FileOutputStream out = new FileOutputStream(ack.toFile(), true)) {
            heap.maxTries(1_000_000);
            List<PObject> list = heap.roots().get("t.bank.accounts").as(org.uniheap.PList.class);
            BankAccount[] accts = list.stream().map(p -> p.as(BankAccount.class)).toArray(BankAccount[]::new);
            long end = System.nanoTime() + 30_000_000_000L;
            while (!Files.exists(go) && System.nanoTime() < end)
                Thread.sleep(2);
            int n = accts.length;
            for (int seq = 0; seq < count; seq++) {
                int src = rnd.nextInt(n), dst = (src + 1 + rnd.nextInt(n - 1)) % n;
                long amount = 1 + rnd.nextInt(50);
                record(out, "I " + wid + " " + seq + " " + src + " " + dst + " " + amount);
                BankAccount s = accts[src], d = accts[dst];
                int moved = heap.atomic(() -> {
                    if (s.balance() < amount)
                        return 0;
                    s.balance(s.balance() - amount);
                    d.balance(d.balance() + amount);
                    return 1;
                });
                record(out, "A " + wid + " " + seq + " " + src + " " + dst + " " + amount + " " + moved);
            }
            System.out.println("worker " + wid + ": " + count + " transfers, " + heap.stats().retries() + " retries");
        }
    }
}
