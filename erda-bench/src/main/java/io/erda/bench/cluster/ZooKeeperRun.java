package io.erda.bench.cluster;

import io.erda.cluster.ClusterDemo;
import io.erda.cluster.ZooKeeperMain;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
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
    private final Process process;
    private final TestingServer inProcess;
    private final Path data;

    private ZooKeeperRun(URI uri, String description, Process process, TestingServer inProcess, Path data) {
        this.uri = uri;
        this.description = description;
        this.process = process;
        this.inProcess = inProcess;
        this.data = data;
    }

    static ZooKeeperRun start() throws Exception {
        if (!Files.isRegularFile(DEBIAN_JAR)) {
            TestingServer server = ZooKeeperMain.start(0);
            return new ZooKeeperRun(URI.create("zk://127.0.0.1:" + server.getPort() + "/erda"),
                    "in-process (Curator TestingServer, ZooKeeper " + org.apache.zookeeper.Version.getFullVersion()
                            + "; Debian's zookeeper package is not installed)", null, server, null);
        }
        int port;
        try (ServerSocket free = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        Path data = ClusterDemo.scratch();
        Process p = new ProcessBuilder(List.of(ProcessHandle.current().info().command().orElse("java"), "-Xmx256m",
                "-cp", "/etc/zookeeper/conf:" + DEBIAN_JAR, "org.apache.zookeeper.server.ZooKeeperServerMain",
                String.valueOf(port), data.toString(), String.valueOf(ZooKeeperMain.TICK_MILLIS)))
                .redirectErrorStream(true).redirectOutput(data.resolve("zookeeper.log").toFile()).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 500);
                break;
            } catch (IOException notYet) {
                if (!p.isAlive() || System.nanoTime() > deadline) {
                    p.destroyForcibly();
                    throw new IllegalStateException("Debian's ZooKeeper did not listen on port " + port
                            + " (log " + data.resolve("zookeeper.log") + ")");
                }
                Thread.sleep(100);
            }
        }
        return new ZooKeeperRun(URI.create("zk://127.0.0.1:" + port + "/erda"), "Debian's zookeeper package ("
                + DEBIAN_JAR + ", ZooKeeperServerMain, pid " + p.pid() + ")", p, null, data);
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
            process.destroy();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            ClusterDemo.deleteTree(data);
        }
    }
}
