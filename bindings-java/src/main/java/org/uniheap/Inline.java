package org.uniheap;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Makes a {@code String} or {@code byte[]} field inline (FORMAT.md 3.2): its
 * value lives inside the object, at most {@link #value()} bytes (UTF-8 for
 * a string), instead of in a string or bytes object of its own. A record
 * of inline fields is one object: one allocation to create, one copy to
 * read. An inline field is never null (a new object's is empty); a longer
 * value is refused with {@link ValueRangeException} naming the field, its
 * capacity and the value's length. Put it on the getter (or the setter).
 *
 * <pre>{@code
 * @Persistent("ycsb.Record")
 * public interface Record extends PObject {
 *     @Inline(100) byte[] field0();
 *     void field0(byte[] v);
 * }
 * }</pre>
 */
@Documented
@Retention(RetentionPolicy.CLASS)
@Target(ElementType.METHOD)
public @interface Inline {
    /** The capacity in bytes, 1 to 65535. */
    int value();
}
