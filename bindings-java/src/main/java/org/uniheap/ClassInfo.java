package org.uniheap;

import java.util.List;

/**
 * One class of a heap's class table ({@link Heap#classes()}).
 * @param id the class id in this heap
 * @param name the language-neutral name
 * @param kind 1 record, 2 string, 3 bytes, 4 reference table
 * @param payloadSize bytes after the 16-byte object header (records)
 * @param fields the fields in layout order
 */
public record ClassInfo(int id, String name, int kind, int payloadSize, List<Field> fields) {
    /**
     * One field.
     * @param name the field's name
     * @param type its type
     * @param offset byte offset from the object's start
     * @param refClass for a typed reference, the target class id; else 0
     */
    public record Field(String name, FieldType type, int offset, int refClass) {
    }
}
