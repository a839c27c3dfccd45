package org.uniheap;

import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The persistent interfaces this JVM has declared (their generated proxy
 * classes were loaded), by interface and by heap class name. Several
 * interfaces may declare one heap name: an object of that class is
 * proxied by the first whose layout is the heap's.
 */
final class Declared {
    private Declared() {
    }

    private static final ConcurrentHashMap<Class<?>, ProxyBase.Layout> BY_TYPE = new ConcurrentHashMap<>();
    private static final ConcurrentHashMap<String, List<ProxyBase.Layout>> BY_NAME = new ConcurrentHashMap<>();

    static void add(ProxyBase.Layout l) {
        BY_TYPE.put(l.type, l);
        BY_NAME.computeIfAbsent(l.name, n -> new CopyOnWriteArrayList<>()).add(l);
    }

    /** The layouts declared under a heap class name, in declaration order. */
    static List<ProxyBase.Layout> byName(String name) {
        return BY_NAME.getOrDefault(name, List.of());
    }

    /**
     * The layout of a persistent interface; loads its generated proxy
     * class the first time.
     * @throws InvalidValueException if type is no persistent interface
     */
    static ProxyBase.Layout of(Class<?> type) {
        ProxyBase.Layout l = BY_TYPE.get(type);
        if (l == null) {
            load(type);
            l = BY_TYPE.get(type);
            if (l == null)
                throw new InvalidValueException(type.getName() + " has no generated proxy: is it "
                        + "annotated @Persistent?");
        }
        return l;
    }

    /* The generated class is <package>.<Outer_Inner>_Proxy; loading it runs
     * its static initializer, which calls ProxyBase.declare. */
    private static void load(Class<?> type) {
        if (!type.isInterface() || !PObject.class.isAssignableFrom(type))
            throw new InvalidValueException(type.getName() + " is not a persistent class: declare "
                    + "an interface extending org.uniheap.PObject, annotated @Persistent(\"name\")");
        String pkg = type.getPackageName();
        String flat = type.getName().substring(pkg.isEmpty() ? 0 : pkg.length() + 1).replace('$', '_');
        String gen = (pkg.isEmpty() ? "" : pkg + ".") + flat + "_Proxy";
        try {
            Class.forName(gen, true, type.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new InvalidValueException(type.getName() + " has no generated proxy " + gen
                    + ": compile it with the uniheap annotation processor (javac -proc:full, or "
                    + "<proc>full</proc> in the maven-compiler-plugin configuration; since JDK 23 "
                    + "javac runs processors only when asked)");
        }
    }
}
