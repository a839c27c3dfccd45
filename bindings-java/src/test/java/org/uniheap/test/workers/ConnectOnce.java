package org.uniheap.test.workers;

import org.uniheap.Heap;
import org.uniheap.UniheapException;

/** Connects once ($UNIHEAP_SOCKET) and prints "connected" or the error's message. */
public final class ConnectOnce {
    private ConnectOnce() {
    }

    public static void main(String[] args) {
        try (Heap heap = Heap.connect()) {
            System.out.println("connected");
        } catch (UniheapException e) {
            System.out.println("error: " + e.getMessage());
        }
    }
}
