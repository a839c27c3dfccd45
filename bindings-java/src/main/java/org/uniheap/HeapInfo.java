package org.uniheap;

/**
 * Facts of a heap and of one connection to it ({@link Heap#info()}).
 * @param size bytes of the heap this process has mapped (its size at
 *        connect, more once it reached a part the heap grew into)
 * @param formatVersion heap format version
 * @param durability "pmem", "sync" or "memory"
 * @param readOnly connected read-only
 * @param name the heap's name
 * @param path the heap file's path
 * @param sessions libuniheap sessions this connection has opened so far
 * @param curSize bytes of the heap now (as {@code heapctl status} shows it)
 * @param maxSize the most the heap may grow to ({@code heapd --max-size};
 *        curSize when it does not grow)
 * @param usedSize bytes held by arenas
 */
public record HeapInfo(long size, int formatVersion, String durability, boolean readOnly,
                       String name, String path, int sessions, long curSize, long maxSize,
                       long usedSize) {
}
