package org.uniheap;

/**
 * Facts of a heap and of one connection to it ({@link Heap#info()}).
 * @param size bytes of the heap file
 * @param formatVersion heap format version
 * @param durability "pmem", "sync" or "memory"
 * @param readOnly connected read-only
 * @param name the heap's name
 * @param path the heap file's path
 * @param sessions libuniheap sessions this connection has opened so far
 */
public record HeapInfo(long size, int formatVersion, String durability, boolean readOnly,
                       String name, String path, int sessions) {
}
