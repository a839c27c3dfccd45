package org.uniheap.test;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.uniheap.Heap;
import org.uniheap.HeapStats;

/**
 * The online GC from Java: a loop of blocks that each replace the object
 * a root refers to ({@code head.left = new node}) allocates many times the
 * heap's capacity on a small heap, and never finds it full (heapd's
 * automatic cycles reclaim the replaced nodes once the JVM released their
 * proxies' pins); nodes whose proxies a Java list holds survive cycles,
 * readable, though nothing in the heap refers to them.
 *
 * <p>Sizes: -Duniheap.gcLeakSteps (default 1,000,000 replacements: a 16M
 * heap, the default -Duniheap.gcLeakHeap, has 6 MiB of arenas, about
 * 87,000 of these nodes, so over ten times that) and -Duniheap.gcLeakHeap;
 * the acceptance run is 10,000,000 on 64M ({@code mvn -f bindings-java
 * test -Dtest=GcLeakTest -Duniheap.gcLeakSteps=10000000
 * -Duniheap.gcLeakHeap=64M}: the pom passes both on). Skipped when the
 * heapd under test has no collector ({@code heapctl gc --wait} fails).
 */
class GcLeakTest {
    private static final long STEPS = Long.getLong("uniheap.gcLeakSteps", 1_000_000);
    private static final String SIZE = sizeProperty();
    private static final int HELD_EVERY = 100;
    private Heapd heapd;

    /* A heap of its own per test: the garbage one test leaves fills arenas
     * that the next one's session log would need. */
    @BeforeEach
    void startHeapd() throws Exception {
        heapd = Heapd.start(SIZE);
        Assumptions.assumeTrue(heapd.gc(), "heapd has no collector: heapctl gc --wait failed");
    }

    @AfterEach
    void stopHeapd() {
        if (heapd != null)
            heapd.close();
        heapd = null;
    }

    /* -Duniheap.gcLeakHeap, or 16M (also when Maven passes the property
     * unset, as its unexpanded name). */
    private static String sizeProperty() {
        String s = System.getProperty("uniheap.gcLeakHeap", "");
        return s.isEmpty() || s.startsWith("$") ? "16M" : s;
    }

    /* The loop: STEPS blocks, each making a node of value n the head's
     * left one; every HELD_EVERY-th node's proxy goes to held, if any. */
    private static void replace(Heap heap, TreeNode head, List<TreeNode> held) {
        for (long n = 0; n < STEPS; n++) {
            long v = n;
            TreeNode x = heap.atomic(() -> {
                TreeNode node = heap.create(TreeNode.class);
                node.value(v);
                head.left(node);
                return node;
            });
            if (held != null && n % HELD_EVERY == 0)
                held.add(x);
        }
    }

    private static TreeNode head(Heap heap, String root) {
        return heap.atomic(() -> {
            TreeNode h = heap.create(TreeNode.class);
            heap.roots().put(root, h);
            return h;
        });
    }

    @Test
    void replacingAnObjectNeverFillsTheHeap() {
        try (Heap heap = Heap.connect(heapd.socket)) {
            TreeNode head = head(heap, "gc.leak");
            replace(heap, head, null);
            assertEquals(STEPS - 1, head.left().value());
            HeapStats s = heap.stats();
            System.out.println("GcLeakTest: " + STEPS + " replacements on " + SIZE + ": "
                    + s.gcCycles() + " GC cycles seen, " + s.pins() + " pins held at the end");
        }
    }

    @Test
    void nodesHeldByProxiesSurvive() throws Exception {
        try (Heap heap = Heap.connect(heapd.socket)) {
            TreeNode head = head(heap, "gc.held");
            List<TreeNode> held = new ArrayList<>();
            replace(heap, head, held);
            for (int c = 0; c < 2; c++)
                assertTrue(heapd.gc(), "heapctl gc --wait");
            for (int i = 0; i < held.size(); i++) {
                TreeNode n = held.get(i);
                assertTrue(n.isLive(), "held node " + i + " was freed");
                assertEquals((long) i * HELD_EVERY, n.value(), "held node " + i);
            }
            heap.check();
        }
    }
}
