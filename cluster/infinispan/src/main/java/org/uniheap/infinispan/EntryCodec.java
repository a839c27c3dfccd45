package org.uniheap.infinispan;

import java.nio.ByteBuffer;

import org.infinispan.commons.io.ByteBufferFactory;
import org.infinispan.persistence.spi.MarshallableEntry;
import org.infinispan.persistence.spi.MarshallableEntryFactory;

/**
 * One stored entry as one bytes value: what Infinispan marshalled (value,
 * metadata, internal metadata) and its times, beside each other, so that a
 * load is one map lookup and one copy.
 *
 * Layout (big-endian): u8 format (1), i64 created, i64 lastUsed, i64 expiry
 * (-1: never), then three (i32 length, bytes) parts: value, metadata,
 * internal metadata; length -1 stands for null. The expiry is Infinispan's
 * own (MarshallableEntry.expiryTime), kept in the header so that expiration
 * needs no unmarshalling. Records of another format byte are refused.
 */
final class EntryCodec {
    static final byte FORMAT = 1;
    private static final int HEADER = 1 + 3 * Long.BYTES;
    private static final int EXPIRY_AT = 1 + 2 * Long.BYTES;

    private EntryCodec() {}

    static byte[] encode(MarshallableEntry<?, ?> e) {
        org.infinispan.commons.io.ByteBuffer v = e.getValueBytes();
        org.infinispan.commons.io.ByteBuffer m = e.getMetadataBytes();
        org.infinispan.commons.io.ByteBuffer im = e.getInternalMetadataBytes();
        ByteBuffer out = ByteBuffer.allocate(HEADER + partSize(v) + partSize(m) + partSize(im));
        out.put(FORMAT).putLong(e.created()).putLong(e.lastUsed()).putLong(e.expiryTime());
        putPart(out, v);
        putPart(out, m);
        putPart(out, im);
        return out.array();
    }

    /** The entry's expiry time in ms since the epoch, -1 if it never expires. */
    static long expiry(byte[] rec) {
        check(rec);
        return ByteBuffer.wrap(rec).getLong(EXPIRY_AT);
    }

    static boolean isExpired(byte[] rec, long now) {
        long exp = expiry(rec);
        return exp >= 0 && exp <= now;
    }

    /**
     * The entry of a record, for key (an object) or keyBytes (its marshalled
     * form; used when key is null).
     */
    static <K, V> MarshallableEntry<K, V> decode(byte[] rec, Object key,
            org.infinispan.commons.io.ByteBuffer keyBytes, boolean withValue,
            MarshallableEntryFactory<K, V> entries, ByteBufferFactory buffers) {
        check(rec);
        ByteBuffer in = ByteBuffer.wrap(rec, 1, rec.length - 1);
        long created = in.getLong();
        long lastUsed = in.getLong();
        in.getLong();
        var value = getPart(in, rec, buffers);
        var meta = getPart(in, rec, buffers);
        var internal = getPart(in, rec, buffers);
        if (!withValue)
            value = null;
        return key != null ? entries.create(key, value, meta, internal, created, lastUsed)
                : entries.create(keyBytes, value, meta, internal, created, lastUsed);
    }

    private static void check(byte[] rec) {
        if (rec.length < HEADER || rec[0] != FORMAT)
            throw new IllegalStateException("uniheap store: not an entry record of format "
                    + FORMAT + " (" + rec.length + " bytes)");
    }

    private static int partSize(org.infinispan.commons.io.ByteBuffer b) {
        return Integer.BYTES + (b == null ? 0 : b.getLength());
    }

    private static void putPart(ByteBuffer out, org.infinispan.commons.io.ByteBuffer b) {
        if (b == null) {
            out.putInt(-1);
        } else {
            out.putInt(b.getLength());
            out.put(b.getBuf(), b.getOffset(), b.getLength());
        }
    }

    private static org.infinispan.commons.io.ByteBuffer getPart(ByteBuffer in, byte[] rec,
            ByteBufferFactory buffers) {
        int len = in.getInt();
        if (len < 0)
            return null;
        int at = in.position();
        in.position(at + len);
        return buffers.newByteBuffer(rec, at, len);
    }
}
