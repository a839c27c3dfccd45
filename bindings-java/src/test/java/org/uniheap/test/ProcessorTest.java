package org.uniheap.test;

import static org.junit.jupiter.api.Assertions.*;

import java.io.StringWriter;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.ToolProvider;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.uniheap.processor.PersistentProcessor;

/** Invalid declarations fail at compile time, with a message naming the problem. */
class ProcessorTest {
    @TempDir
    Path out;

    /** Errors of compiling one source file with the processor. */
    private List<String> compile(String source) throws Exception {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        DiagnosticCollector<JavaFileObject> diags = new DiagnosticCollector<>();
        JavaFileObject file = new SimpleJavaFileObject(URI.create("string:///p/Decl.java"),
                JavaFileObject.Kind.SOURCE) {
            @Override
            public CharSequence getCharContent(boolean ignoreEncodingErrors) {
                return source;
            }
        };
        String cp = System.getProperty("java.class.path");
        JavaCompiler.CompilationTask task = javac.getTask(new StringWriter(), null, diags,
                List.of("-d", out.toString(), "-cp", cp, "-proc:full"), null, List.of(file));
        task.setProcessors(List.of(new PersistentProcessor()));
        task.call();
        List<String> errors = new ArrayList<>();
        for (Diagnostic<? extends JavaFileObject> d : diags.getDiagnostics())
            if (d.getKind() == Diagnostic.Kind.ERROR)
                errors.add(d.getMessage(null));
        return errors;
    }

    private void fails(String decl, String expected) throws Exception {
        List<String> errors = compile("package p; import org.uniheap.*; " + decl);
        assertFalse(errors.isEmpty(), "no error for: " + decl);
        assertTrue(errors.get(0).contains(expected), errors.toString());
    }

    @Test
    void validDeclarationGeneratesAProxy() throws Exception {
        List<String> errors = compile("package p; import org.uniheap.*; public class Decl { "
                + "@Persistent(\"p.Thing\") public interface Thing extends PObject { long n(); void n(long v); "
                + "String s(); Thing next(); PMap<String, Long> m(); default long twice() { return 2 * n(); } } }");
        assertEquals(List.of(), errors);
        assertTrue(Files.exists(out.resolve("p/Decl_Thing_Proxy.class")));
    }

    @Test
    void invalidDeclarations() throws Exception {
        fails("@Persistent(\"p.C\") abstract class Decl implements PObject {}", "applies to interfaces");
        fails("@Persistent(\"p.C\") interface Decl { long x(); }", "must extend org.uniheap.PObject");
        fails("@Persistent(\"\") interface Decl extends PObject { long x(); }", "language-neutral heap name");
        fails("@Persistent(\"p.C\") interface Decl extends PObject { void x(long a, long b); }",
                "abstract methods are fields");
        fails("@Persistent(\"p.C\") interface Decl extends PObject { java.util.List<String> x(); }",
                "persistent fields are boolean");
        fails("@Persistent(\"p.C\") interface Decl extends PObject { char x(); }", "persistent fields are");
        fails("@Persistent(\"p.C\") interface Decl extends PObject { long ref(); }", "method of PObject");
        fails("@Persistent(\"p.C\") interface Decl extends PObject { long fieldValues(); }",
                "method of PObject");
        fails("@Persistent(\"p.C\") interface Decl extends PObject { long x(); void x(int v); }",
                "disagree on its type");
        fails("@Persistent(\"p.C\") interface Decl extends PObject { void x(long v); }", "no getter");
        fails("@Persistent(\"p.C\") interface Decl<T> extends PObject { long x(); }", "type parameters");
        fails("interface Mixin { long extra(); } @Persistent(\"p.C\") interface Decl extends PObject, Mixin { long x(); }",
                "has no implementation");
        fails("@Persistent(\"p.A\") interface A extends PObject { long x(); } "
                + "@Persistent(\"p.C\") interface Decl extends A { long x(); }", "already declared");
    }
}
