package org.uniheap;

import java.util.concurrent.ConcurrentHashMap;

/**
 * The persistent interfaces this JVM has declared (their generated proxy
 * classes were loaded), by interface and by heap class name.
 */
final class Declared {
    private Declared() {
    }

    private static final ConcurrentHashMap<Class<?>, ProxyBase.Layout> BY_TYPE = new ConcurrentHashMap<>();
    private static final ConcurrentHashMap<String, ProxyBase.Layout> BY_NAME = new ConcurrentHashMap<>();

    static void add(ProxyBase.Layout l) {
        BY_TYPE.put(l.type, l);
        BY_NAME.putIfAbsent(l.name, l);
    }

    /** The layout declared under a heap class name, or null. */
    static ProxyBase.Layout byName(String name) {
        return BY_NAME.get(name);
    }

    /**
     * The layout of a persistent interface; loads its generated proxy
     * class the first time.
     * @throws InvalidValueException if type is no persistent interface
     * @throws ClassMismatchException if another interface declares the same name
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
        ProxyBase.Layout owner = BY_NAME.get(l.name);
        if (owner != l)
            throw new ClassMismatchException(Errors.ECLASSMISMATCH, "heap class " + l.name
                    + " is declared twice in this JVM, by " + owner.type.getName() + " and by "
                    + type.getName() + ": declare it once");
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
