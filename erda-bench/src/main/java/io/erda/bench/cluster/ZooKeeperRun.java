package io.erda.bench.cluster;

import io.erda.cluster.harness.ClusterDemo;
import io.erda.cluster.harness.ZooKeeperMain;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;

/**
 * A single ZooKeeper server for a demo run: Debian's package ({@code zookeeper}: {@code /usr/share/java/zookeeper.jar},
 * its {@code ZooKeeperServerMain} as a process of its own on a free loopback port, data in a scratch directory) when
 * installed, else Curator's in-process {@link TestingServer} ({@link ZooKeeperMain}). Tick 200 ms either way, so
 * sessions of a second or two are allowed. {@link #description()} says which.
 */
final class ZooKeeperRun implements AutoCloseable {
    static final Path DEBIAN_JAR = Path.of("/usr/share/java/zookeeper.jar");

    private final URI uri;
    private final String description;
    private final ProcessBuilder builder;
    private Process process;
    private final TestingServer inProcess;
    private final Path data;

    private ZooKeeperRun(URI uri, String description, ProcessBuilder builder, Process process, TestingServer inProcess,
                         Path data) {
        this.uri = uri;
        this.description = description;
        this.builder = builder;
        this.process = process;
        this.inProcess = inProcess;
        this.data = data;
    }

    static ZooKeeperRun start() throws Exception {
        if (!Files.isRegularFile(DEBIAN_JAR)) {
            TestingServer server = ZooKeeperMain.start(0);
            return new ZooKeeperRun(URI.create("zk://127.0.0.1:" + server.getPort() + "/erda"),
                    "in-process (Curator TestingServer, ZooKeeper " + org.apache.zookeeper.Version.getFullVersion()
                            + "; Debian's zookeeper package is not installed)", null, null, server, null);
        }
        int port;
        try (ServerSocket free = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        Path data = ClusterDemo.scratch();
        return process(List.of(), "127.0.0.1", port, data, data.resolve("zookeeper.log"));
    }

    /**
     * ZooKeeper's {@code ZooKeeperServerMain} as a process of its own, started through {@code launcher} (e.g.
     * {@code ip netns exec NS}; empty: directly), listening on {@code port} (all addresses of its network namespace)
     * and reached at {@code host}, its data in {@code data}, which {@link #close()} deletes, its output appended to
     * {@code log}. Debian's package
     * when installed, else the ZooKeeper on this JVM's class path (Curator's); {@link #restart()} stops and starts it
     * again on the same data and port.
     */
    static ZooKeeperRun process(List<String> launcher, String host, int port, Path data, Path log) throws Exception {
        boolean debian = Files.isRegularFile(DEBIAN_JAR);
        List<String> command = new ArrayList<>(launcher);
        command.addAll(List.of(ProcessHandle.current().info().command().orElse("java"), "-Xmx256m",
                "-cp", debian ? "/etc/zookeeper/conf:" + DEBIAN_JAR : System.getProperty("java.class.path"),
                "org.apache.zookeeper.server.ZooKeeperServerMain",
                String.valueOf(port), data.toString(), String.valueOf(ZooKeeperMain.TICK_MILLIS)));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        Process p = startListening(builder, host, port, log);
        return new ZooKeeperRun(URI.create("zk://" + host + ":" + port + "/erda"), (debian
                ? "Debian's zookeeper package (" + DEBIAN_JAR : "ZooKeeper " + org.apache.zookeeper.Version.getFullVersion()
                + " from the class path (Debian's zookeeper package is not installed") + ", ZooKeeperServerMain, pid "
                + p.pid() + ")", builder, p, null, data);
    }

    private static Process startListening(ProcessBuilder builder, String host, int port, Path log) throws Exception {
        Process p = builder.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(host, port), 500);
                return p;
            } catch (IOException notYet) {
                if (!p.isAlive() || System.nanoTime() > deadline) {
                    p.destroyForcibly();
                    throw new IllegalStateException("ZooKeeper did not listen on " + host + ":" + port
                            + " (log " + log + ")");
                }
                Thread.sleep(100);
            }
        }
    }

    /** Stops a ZooKeeper process (SIGTERM, then SIGKILL) and starts it again on the same data directory and port. */
    void restart() throws Exception {
        if (builder == null) {
            throw new IllegalStateException("an in-process ZooKeeper cannot be restarted");
        }
        stopProcess();
        process = startListening(builder, uri.getHost(), uri.getPort(), builder.redirectOutput().file().toPath());
    }

    private void stopProcess() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    URI uri() {
        return uri;
    }

    String description() {
        return description;
    }

    @Override
    public void close() throws Exception {
        if (inProcess != null) {
            inProcess.close();
        }
        if (process != null) {
            stopProcess();
            ClusterDemo.deleteTree(data);
        }
    }
}
