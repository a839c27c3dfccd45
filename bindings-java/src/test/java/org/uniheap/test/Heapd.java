package org.uniheap.test;

import java.io.File;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A private heapd for tests: a fresh heap (memory durability, on tmpfs when
 * /dev/shm is there) and socket in a new temporary folder. start() creates
 * the heap the first time and reopens it after stop(); every process a
 * test starts is stopped by its pid, at the latest when the JVM exits.
 * Shipped in the binding's test jar (uniheap-VERSION-tests.jar, this
 * class only), which the Infinispan module's tests use too.
 */
public final class Heapd implements AutoCloseable {
    private static final List<Process> LIVE = new ArrayList<>();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            synchronized (LIVE) {
                for (Process p : LIVE)
                    p.destroyForcibly();
            }
        }));
    }

    public final Path dir;
    public final Path heapFile;
    public final Path socket;
    public final Path log;
    private final String size;
    private final List<String> createArgs;
    private Process proc;

    private Heapd(Path dir, String size, List<String> createArgs) {
        this.dir = dir;
        this.heapFile = dir.resolve("heap.uh");
        this.socket = dir.resolve("heapd.sock");
        this.log = dir.resolve("heapd.log");
        this.size = size;
        this.createArgs = createArgs;
    }

    /** A started heapd on a new heap of the given size ("64M"), made with
     * more --create options if given ("--max-size", "1G"). */
    public static Heapd start(String size, String... createArgs) throws IOException {
        Path base = Files.isWritable(Path.of("/dev/shm")) ? Path.of("/dev/shm")
                : Path.of(System.getProperty("java.io.tmpdir"));
        Heapd d = new Heapd(Files.createTempDirectory(base, "uniheap-java-"), size,
                List.of(createArgs));
        d.start();
        return d;
    }

    public static Path buildDir() {
        String b = System.getProperty("uniheap.build");
        if (b == null)
            throw new IllegalStateException("-Duniheap.build is not set (run the tests with make test)");
        return Path.of(b).toAbsolutePath().normalize();
    }

    /** build/<name>, or build/tests/c/<name> for prog_* programs. */
    public static Path binary(String name) {
        Path p = name.startsWith("prog_") ? buildDir().resolve("tests/c").resolve(name)
                : buildDir().resolve(name);
        if (!Files.isExecutable(p))
            throw new IllegalStateException(p + " is missing: build the C part first (make)");
        return p;
    }

    /** Start a tracked process; its stdout and stderr go to out (appended). */
    public static Process spawn(List<String> argv, Path out, java.util.Map<String, String> env)
            throws IOException {
        List<String> cmd = new ArrayList<>();
        // heapd and workers die with this JVM even when it is SIGKILLed.
        if (Files.isExecutable(Path.of("/usr/bin/setpriv")))
            cmd.addAll(List.of("/usr/bin/setpriv", "--pdeathsig", "KILL"));
        cmd.addAll(argv);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(out.toFile()))
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        if (env != null)
            pb.environment().putAll(env);
        Process p = pb.start();
        synchronized (LIVE) {
            LIVE.add(p);
        }
        return p;
    }

    /** Stop a process we started: SIGTERM, then SIGKILL after a timeout. */
    public static int stop(Process p, long timeoutMs) throws InterruptedException {
        if (p.isAlive()) {
            p.destroy();
            if (!p.waitFor(timeoutMs, TimeUnit.MILLISECONDS))
                p.destroyForcibly().waitFor();
        }
        synchronized (LIVE) {
            LIVE.remove(p);
        }
        return p.exitValue();
    }

    public void start() throws IOException {
        if (proc != null && proc.isAlive())
            throw new IllegalStateException("heapd already running");
        List<String> argv = new ArrayList<>(List.of(binary("heapd").toString(), "--heap",
                heapFile.toString(), "--socket", socket.toString()));
        if (!Files.exists(heapFile)) {
            // --max-size = --size: a test's heap keeps the size it asked for
            // (heapd's default lets it grow); createArgs may override it.
            argv.addAll(List.of("--create", "--size", size, "--max-size", size,
                    "--durability", "memory"));
            argv.addAll(createArgs);
        }
        proc = spawn(argv, log, null);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            if (!proc.isAlive())
                throw new IOException("heapd exited with " + proc.exitValue() + "\n" + logTail());
            if (accepts())
                return;
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted");
            }
        }
        stop();
        throw new IOException("heapd did not accept on " + socket + " within 20 s\n" + logTail());
    }

    private boolean accepts() {
        try (SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            c.connect(UnixDomainSocketAddress.of(socket));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    public boolean running() {
        return proc != null && proc.isAlive();
    }

    /** SIGTERM (a clean stop; the heap file stays). */
    public void stop() {
        if (proc == null)
            return;
        try {
            stop(proc, 5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        proc = null;
    }

    /** SIGKILL heapd (a crash; the heap file stays). */
    public void kill() throws InterruptedException {
        if (proc == null)
            return;
        proc.destroyForcibly().waitFor();
        synchronized (LIVE) {
            LIVE.remove(proc);
        }
        proc = null;
    }

    public void restart() throws IOException {
        stop();
        start();
    }

    /** Run heapctl --socket <sock> args; its output. */
    public String heapctl(String... args) throws IOException, InterruptedException {
        List<String> argv = new ArrayList<>(List.of(binary("heapctl").toString(), "--socket",
                socket.toString()));
        argv.addAll(List.of(args));
        Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        p.waitFor(30, TimeUnit.SECONDS);
        return out;
    }

    /** heapctl gc --wait: one collector cycle, run to its end; false when
     * heapctl fails (this heapd has no collector). */
    public boolean gc() throws IOException, InterruptedException {
        List<String> argv = List.of(binary("heapctl").toString(), "--socket", socket.toString(),
                "gc", "--wait");
        Process p = new ProcessBuilder(argv).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor();
            return false;
        }
        return p.exitValue() == 0;
    }

    public String logTail() {
        try {
            String s = Files.readString(log);
            return s.length() > 3000 ? s.substring(s.length() - 3000) : s;
        } catch (IOException e) {
            return "";
        }
    }

    @Override
    public void close() {
        stop();
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // best effort
        }
    }
}
