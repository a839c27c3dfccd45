package org.uniheap.test;

import org.uniheap.PObject;
import org.uniheap.Persistent;

/** A persistent class without fields. */
@Persistent("jt.NoFields")
public interface NoFields extends PObject {
}
