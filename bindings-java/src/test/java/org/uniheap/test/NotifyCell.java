package org.uniheap.test;

import org.uniheap.PObject;
import org.uniheap.Persistent;

/** The cell of the change-notification tests; the layout of
 * tests/notify's NotifyCell, so that its peers read it too. */
@Persistent("NotifyCell")
public interface NotifyCell extends PObject {
    long ping();
    void ping(long v);
    long pong();
    void pong(long v);
    long ts();
    void ts(long v);
}
