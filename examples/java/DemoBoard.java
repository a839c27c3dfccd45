/*
 * DemoBoard.java -- the Java process of `make demo`, run as a single-file
 * source program:
 *
 *   java --enable-native-access=ALL-UNNAMED -cp bindings-java/target/uniheap-0.1.0.jar \
 *        examples/java/DemoBoard.java AMOUNT
 *
 * Connects to heapd ($UNIHEAP_SOCKET), opens the root "demo.board" that the
 * C process published (its classes DemoBoard and DemoCounter are not
 * declared here: generic proxies read them through the heap's class
 * table), says what the counter holds and which process wrote it last,
 * then adds AMOUNT to it in one failure-atomic block (re-run if another
 * process wins a conflict) and says the value it committed.
 */
import org.uniheap.Heap;
import org.uniheap.PObject;

public final class DemoBoard {
    public static void main(String[] args) {
        if (args.length != 1 || !args[0].matches("-?[0-9]+")) {
            System.err.println("usage: java ... DemoBoard.java AMOUNT");
            System.exit(2);
        }
        long amount = Long.parseLong(args[0]);
        long pid = ProcessHandle.current().pid();
        String me = "java (pid " + pid + ")";
        try (Heap heap = Heap.connect()) {
            PObject board = heap.roots().get("demo.board");
            if (board == null) {
                System.err.println(me + ": no root \"demo.board\" in this heap: run the C process first");
                System.exit(1);
            }
            PObject counter = (PObject) board.getField("counter");
            System.out.println(me + ": found \"" + board.getField("title") + "\": counter = "
                    + counter.getField("value") + ", last written by pid " + counter.getField("writer_pid"));
            long now = heap.atomic(() -> {
                long v = (Long) counter.getField("value") + amount;
                counter.setField("value", v);
                counter.setField("writer_pid", pid);
                return v;
            });
            System.out.println(me + ": added " + amount + " in one atomic block: counter = " + now);
        }
    }
}
