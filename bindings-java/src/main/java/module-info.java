/**
 * uniheap for Java: persistent objects in a heap shared with C, Python and
 * Node processes, through the FFM API (no JNI). On the module path, run
 * with {@code --enable-native-access=org.uniheap}; on the class path, with
 * {@code --enable-native-access=ALL-UNNAMED}.
 *
 * <p>The module also provides the annotation processor that generates the
 * proxies of {@code @Persistent} interfaces (javac {@code -proc:full}); it
 * needs java.compiler only while javac runs it, hence {@code requires
 * static}. Generated proxies live in the user's packages and use only the
 * exported package {@code org.uniheap}.
 */
module org.uniheap {
    requires static java.compiler;

    exports org.uniheap;
    exports org.uniheap.processor;

    provides javax.annotation.processing.Processor
            with org.uniheap.processor.PersistentProcessor;
}
