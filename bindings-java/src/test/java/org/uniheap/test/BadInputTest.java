package org.uniheap.test;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.uniheap.Bytes;
import org.uniheap.FreedObjectException;
import org.uniheap.Heap;
import org.uniheap.HeapClosedException;
import org.uniheap.InvalidValueException;
import org.uniheap.PList;
import org.uniheap.PMap;
import org.uniheap.PObject;
import org.uniheap.PSortedMap;
import org.uniheap.TypeMismatchException;
import org.uniheap.UniheapException;

/** Wrong types, out-of-range values, stale proxies, closed and foreign heaps. */
class BadInputTest extends HeapTest {
    /** Not annotated: no proxy is generated for it. */
    interface NotPersistent extends PObject {
        long x();
    }

    @Test
    void classesThatAreNotPersistent() {
        InvalidValueException e = assertThrows(InvalidValueException.class, () -> heap.create(NotPersistent.class));
        assertTrue(e.getMessage().contains("-proc:full"), e.getMessage());
        @SuppressWarnings({"unchecked", "rawtypes"})
        Class<PObject> raw = (Class) String.class;
        assertThrows(InvalidValueException.class, () -> heap.create(raw));
    }

    @Test
    void wrongKeysAndValues() {
        PMap<String, Object> m = heap.newMap(String.class);
        assertThrows(ClassCastException.class, () -> m.get(1L));
        assertThrows(ClassCastException.class, () -> ((PMap<Object, Object>) (PMap<?, ?>) m).put(new byte[] {1}, 1));
        assertThrows(NullPointerException.class, () -> m.get(null));
        assertThrows(InvalidValueException.class, () -> m.put("k".repeat(5000), 1L));
        assertThrows(TypeMismatchException.class, () -> m.put("k", new Object()));
        assertThrows(InvalidValueException.class, () -> heap.newMap(Integer.class));
        PSortedMap<Bytes, Object> s = heap.newSortedMap(Bytes.class);
        assertThrows(ClassCastException.class, () -> ((PSortedMap<Object, Object>) (PSortedMap<?, ?>) s).put("str", 1));
        assertThrows(InvalidValueException.class, () -> heap.newArray(Object.class, 3));
        assertThrows(IllegalArgumentException.class, () -> heap.newArray(long.class, -1));
        assertThrows(InvalidValueException.class, () -> heap.roots().put("bad\0name", heap.newList()));
        assertThrows(ClassCastException.class, () -> ((java.util.Map<Object, PObject>) (java.util.Map<?, ?>) heap.roots()).get(5));
    }

    @Test
    void typedReferenceToTheWrongClass() {
        Kinds k = heap.create(Kinds.class);
        Account a = heap.create(Account.class);
        // Kinds.next is typed Kinds in the heap: a generic write of an Account is refused
        TypeMismatchException e = assertThrows(TypeMismatchException.class, () -> k.setField("next", a));
        assertTrue(e.getMessage().contains("next"), e.getMessage());
        // index is typed uniheap.map: a sorted map is another class
        assertThrows(TypeMismatchException.class, () -> k.setField("index", heap.newSortedMap(String.class)));
        // a proxy viewed as another class
        assertThrows(TypeMismatchException.class, () -> heap.proxy(k.ref()).as(Account.class));
        assertThrows(TypeMismatchException.class, () -> heap.newList().as(Account.class));
    }

    @Test
    void staleProxies() {
        PMap<String, Object> m = heap.newMap(String.class);
        PList<Object> l = heap.newList(List.of(1L));
        Account a = heap.create(Account.class);
        heap.free(m);
        heap.free(l);
        heap.free(a);
        assertThrows(FreedObjectException.class, () -> m.get("k"));
        assertThrows(FreedObjectException.class, () -> m.put("k", 1L));
        assertThrows(FreedObjectException.class, () -> l.get(0));
        assertThrows(FreedObjectException.class, l::size);
        assertThrows(FreedObjectException.class, a::owner);
        assertThrows(FreedObjectException.class, () -> a.owner("x"));
        assertThrows(FreedObjectException.class, () -> heap.proxy(12345));
        assertThrows(FreedObjectException.class, () -> heap.proxy(0));
        assertThrows(FreedObjectException.class, () -> heap.proxy(Long.MAX_VALUE));
        assertFalse(m.isLive());
        assertTrue(m.toString().endsWith("(freed)"));
    }

    @Test
    void closedHeap() {
        Heap h = connect();
        Account a = h.create(Account.class);
        PMap<String, Object> m = h.newMap(String.class);
        h.close();
        h.close();   // idempotent
        assertTrue(h.isClosed());
        assertThrows(HeapClosedException.class, a::balance);
        assertThrows(HeapClosedException.class, () -> a.balance(1));
        assertThrows(HeapClosedException.class, () -> m.get("k"));
        assertThrows(HeapClosedException.class, () -> h.roots().get("x"));
        assertThrows(HeapClosedException.class, () -> h.atomic(() -> {}));
        assertThrows(HeapClosedException.class, h::begin);
        assertThrows(HeapClosedException.class, h::stats);
        assertEquals("Heap[closed]", h.toString());
    }

    @Test
    void closeRollsBackThisThreadsBlock() {
        Heap h = connect();
        Account a = h.create(Account.class, x -> x.balance(1));
        long ref = a.ref();
        h.begin();
        a.balance(2);
        h.close();
        assertEquals(1, heap.proxy(ref).as(Account.class).balance());
    }

    @Test
    void foreignHeapsProxy() {
        Heap other = connect();
        Account theirs = other.create(Account.class);
        Kinds mine = heap.create(Kinds.class);
        InvalidValueException e = assertThrows(InvalidValueException.class, () -> mine.any(theirs));
        assertTrue(e.getMessage().contains("another heap"), e.getMessage());
        assertThrows(InvalidValueException.class, () -> heap.free(theirs));
        assertThrows(InvalidValueException.class, () -> heap.roots().put("x", theirs));
        assertThrows(InvalidValueException.class, () -> heap.newMap(String.class).put("k", theirs));
    }

    @Test
    void withoutNativeAccessTheErrorNamesTheFlag() throws Exception {
        java.util.List<String> argv = new java.util.ArrayList<>(Procs.jvm(org.uniheap.test.workers.ConnectOnce.class));
        argv.remove("--enable-native-access=ALL-UNNAMED");
        argv.add(1, "--illegal-native-access=deny");
        Procs.Result r = Procs.run(heapd, argv, 60);
        assertTrue(r.output().contains("error: ") && r.output().contains("--enable-native-access"), r.output());
        argv.add(1, "--enable-native-access=ALL-UNNAMED");
        r = Procs.run(heapd, argv, 60);
        assertTrue(r.output().contains("connected"), r.output());
    }

    @Test
    void errorsCarryCodes() {
        UniheapException e = assertThrows(FreedObjectException.class, () -> heap.proxy(16));
        assertEquals(-7, e.code());
        assertEquals("UH_EFREED", e.codeName());
        assertThrows(IllegalArgumentException.class, () -> heap.maxTries(0));
        assertThrows(IllegalArgumentException.class, () -> Heap.Option.maxSessions(0));
    }
}
