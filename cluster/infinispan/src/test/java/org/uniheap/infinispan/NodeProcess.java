package org.uniheap.infinispan;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.uniheap.test.Heapd;

/**
 * A ClusterNode JVM and its heapd, as the cluster test drives them: started
 * with the test JVM's class path, commanded line by line over stdin/stdout
 * (stderr goes to node-<name>.log in the heapd's folder). kill() is SIGKILL
 * for both; the heap file and the node's global state stay for a restart.
 */
final class NodeProcess implements AutoCloseable {
    final String name;
    final Heapd heapd;
    final int port;
    private final String hosts;
    private Process jvm;
    private BufferedReader out;
    private PrintWriter in;

    NodeProcess(String name, int port, String hosts) throws IOException {
        this.name = name;
        this.port = port;
        this.hosts = hosts;
        this.heapd = Heapd.start("256M");
    }

    /** Start the JVM (heapd must run); returns without waiting for "started". */
    void launch() throws IOException {
        if (!heapd.running())
            heapd.start();
        List<String> cmd = new ArrayList<>();
        if (Files.isExecutable(Path.of("/usr/bin/setpriv")))
            cmd.addAll(List.of("/usr/bin/setpriv", "--pdeathsig", "KILL"));
        cmd.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow",
                "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Djava.net.preferIPv4Stack=true",
                "-Djava.util.logging.config.file=" + System.getProperty("java.util.logging.config.file", ""),
                "-Djgroups.tcp.port=" + port, "-Djgroups.hosts=" + hosts,
                "-cp", System.getProperty("java.class.path"),
                ClusterNode.class.getName(), name, heapd.socket.toString(),
                heapd.dir.resolve("state").toString()));
        jvm = new ProcessBuilder(cmd)
                .redirectError(ProcessBuilder.Redirect.appendTo(heapd.dir.resolve("node-" + name + ".log").toFile()))
                .start();
        out = new BufferedReader(new InputStreamReader(jvm.getInputStream()));
        in = new PrintWriter(jvm.getOutputStream(), true);
    }

    /** The next line the node prints (EOF: an IOException with its log's tail). */
    String read() throws IOException {
        String line = out.readLine();
        if (line == null)
            throw new IOException("node " + name + " ended\n" + logTail());
        return line;
    }

    /** Send a command, return its answer. */
    String ask(String command) throws IOException {
        in.println(command);
        return read();
    }

    /** Ask the node to leave (or shut the cluster's cache down), wait for its exit, return its answer. */
    String quit(String command) throws Exception {
        String answer = ask(command);
        jvm.waitFor();
        jvm = null;
        return answer;
    }

    /** SIGKILL the JVM and its heapd. */
    void kill() throws InterruptedException {
        if (jvm != null)
            jvm.destroyForcibly().waitFor();
        jvm = null;
        heapd.kill();
    }

    String logTail() {
        try {
            String s = Files.readString(heapd.dir.resolve("node-" + name + ".log"));
            return s.length() > 4000 ? s.substring(s.length() - 4000) : s;
        } catch (IOException e) {
            return "";
        }
    }

    @Override
    public void close() {
        try {
            if (jvm != null)
                jvm.destroyForcibly().waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        jvm = null;
        heapd.close();
    }
}
