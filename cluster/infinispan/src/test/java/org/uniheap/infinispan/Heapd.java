package org.uniheap.infinispan;

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
 * A heapd of a test's own: a fresh heap (memory durability, on tmpfs when
 * /dev/shm is writable) and socket in a new temporary folder. start() creates
 * the heap the first time and reopens it later; the process dies with the
 * JVM (pdeathsig and a shutdown hook) and close() removes the folder.
 */
final class Heapd implements AutoCloseable {
    private static final List<Process> LIVE = new ArrayList<>();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            synchronized (LIVE) {
                LIVE.forEach(Process::destroyForcibly);
            }
        }));
    }

    final Path dir;
    final Path heapFile;
    final Path socket;
    private final String size;
    private Process proc;

    private Heapd(Path dir, String size) {
        this.dir = dir;
        this.heapFile = dir.resolve("heap.uh");
        this.socket = dir.resolve("heapd.sock");
        this.size = size;
    }

    /** A started heapd on a new heap of the given size ("128M"). */
    static Heapd start(String size) throws IOException {
        Path base = Files.isWritable(Path.of("/dev/shm")) ? Path.of("/dev/shm")
                : Path.of(System.getProperty("java.io.tmpdir"));
        Heapd d = new Heapd(Files.createTempDirectory(base, "uniheap-ispn-"), size);
        d.start();
        return d;
    }

    /** The CMake build folder (-Duniheap.build), where heapd is. */
    static Path buildDir() {
        String b = System.getProperty("uniheap.build");
        if (b == null)
            throw new IllegalStateException("-Duniheap.build is not set (run the tests with make)");
        return Path.of(b).toAbsolutePath().normalize();
    }

    /** Start a tracked process, its output appended to out. */
    static Process spawn(List<String> argv, Path out) throws IOException {
        List<String> cmd = new ArrayList<>();
        if (Files.isExecutable(Path.of("/usr/bin/setpriv")))
            cmd.addAll(List.of("/usr/bin/setpriv", "--pdeathsig", "KILL"));
        cmd.addAll(argv);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(out.toFile()))
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
        synchronized (LIVE) {
            LIVE.add(p);
        }
        return p;
    }

    static void forget(Process p) {
        synchronized (LIVE) {
            LIVE.remove(p);
        }
    }

    void start() throws IOException {
        Path heapd = buildDir().resolve("heapd");
        if (!Files.isExecutable(heapd))
            throw new IllegalStateException(heapd + " is missing: build the C part first (make)");
        List<String> argv = new ArrayList<>(List.of(heapd.toString(), "--heap",
                heapFile.toString(), "--socket", socket.toString()));
        if (!Files.exists(heapFile))
            argv.addAll(List.of("--create", "--size", size, "--durability", "memory"));
        proc = spawn(argv, dir.resolve("heapd.log"));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            if (!proc.isAlive())
                throw new IOException("heapd exited with " + proc.exitValue() + "\n" + log());
            if (accepts())
                return;
            sleep(10);
        }
        stop();
        throw new IOException("heapd did not accept on " + socket + " within 20 s\n" + log());
    }

    private boolean accepts() {
        try (SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            c.connect(UnixDomainSocketAddress.of(socket));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    boolean running() {
        return proc != null && proc.isAlive();
    }

    /** SIGTERM and wait (SIGKILL after 10 s). */
    void stop() {
        if (proc == null)
            return;
        proc.destroy();
        try {
            if (!proc.waitFor(10, TimeUnit.SECONDS))
                proc.destroyForcibly().waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        forget(proc);
        proc = null;
    }

    /** SIGKILL (a crash; the heap file stays). */
    void kill() throws InterruptedException {
        if (proc == null)
            return;
        proc.destroyForcibly().waitFor();
        forget(proc);
        proc = null;
    }

    String log() {
        try {
            return Files.readString(dir.resolve("heapd.log"));
        } catch (IOException e) {
            return "";
        }
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        stop();
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // best effort: the folder is a temporary one
        }
    }
}
