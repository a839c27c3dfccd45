package org.uniheap.test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Child processes of the tests: C programs, Python scripts and JVMs. */
final class Procs {
    private Procs() {
    }

    /** The result of a process run to its end. */
    record Result(int exit, String output) {
    }

    /** Run argv to its end (at most timeoutSec) with UNIHEAP_SOCKET of heapd. */
    static Result run(Heapd heapd, List<String> argv, int timeoutSec) throws Exception {
        Path out = Files.createTempFile(heapd.dir, "out-", ".txt");
        Process p = Heapd.spawn(argv, out, env(heapd));
        if (!p.waitFor(timeoutSec, TimeUnit.SECONDS)) {
            Heapd.stop(p, 1000);
            throw new AssertionError(argv + " did not finish within " + timeoutSec + " s:\n"
                    + Files.readString(out));
        }
        Heapd.stop(p, 1000);
        return new Result(p.exitValue(), Files.readString(out));
    }

    static Map<String, String> env(Heapd heapd) {
        String pp = System.getProperty("uniheap.pythonpath", "");
        String cur = System.getenv("PYTHONPATH");
        return Map.of("UNIHEAP_SOCKET", heapd.socket.toString(), "PYTHONPATH",
                cur == null || cur.isEmpty() ? pp : pp + ":" + cur, "UNIHEAP_BUILD",
                Heapd.buildDir().toString(), "PYTHONUNBUFFERED", "1");
    }

    /** python3 with the Python binding on its path, running script args. */
    static List<String> python(String script, String... args) {
        List<String> argv = new ArrayList<>(List.of(System.getProperty("uniheap.python", "python3"), script));
        argv.addAll(List.of(args));
        return argv;
    }

    /** A script of the Python binding's tests (bindings-python/tests/workers). */
    static String pyWorker(String name) {
        return Path.of(System.getProperty("uniheap.pythonpath", "bindings-python"), "tests", "workers", name)
                .toString();
    }

    /** A script of these tests (src/test/python). */
    static String javaTestScript(String name) {
        return Path.of("src", "test", "python", name).toAbsolutePath().toString();
    }

    /** A JVM running main class cls of the test class path. */
    static List<String> jvm(Class<?> cls, String... args) throws IOException {
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> argv = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-Xshare:auto", "-XX:TieredStopAtLevel=1",
                "-cp", cp, cls.getName()));
        argv.addAll(List.of(args));
        return argv;
    }
}
