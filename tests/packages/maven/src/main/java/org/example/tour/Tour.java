package org.example.tour;

import org.uniheap.Heap;

/** README.md's Java example as a program: finds or makes the root
 * "origin", adds 1 to x and 2 to y in one block, and prints both, so that
 * a second run shows what the first committed. */
public final class Tour {
    public static void main(String[] args) {
        try (Heap heap = Heap.connect()) {
            Point p = heap.atomic(() -> {
                Point o = heap.root("origin", Point.class);
                if (o == null)
                    heap.roots().put("origin", o = heap.create(Point.class));
                return o;
            });
            heap.atomic(() -> {
                p.x(p.x() + 1);
                p.y(p.y() + 2);
            });
            System.out.println("x=" + p.x() + " y=" + p.y());
        }
    }

    private Tour() {
    }
}
