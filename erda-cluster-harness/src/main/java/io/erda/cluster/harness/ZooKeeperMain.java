package io.erda.cluster.harness;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/**
 * {@code erda-zookeeper [PORT]}: a single real ZooKeeper server in this process (Curator's {@link TestingServer}),
 * its files in a temporary directory (under /dev/shm where there is one) deleted when it closes (at exit here), for tests and
 * {@code scripts/erda-cluster-demo}. Prints {@code zookeeper listening on zk://127.0.0.1:PORT/erda} and runs until
 * killed.
 */
public final class ZooKeeperMain {
    /** A short tick, so sessions of a couple of seconds are allowed (ZooKeeper's minimum is two ticks). */
    public static final int TICK_MILLIS = 200;

    private ZooKeeperMain() {
    }

    /**
     * A started ZooKeeper on {@code port} (0: any free port). Its data directory is {@code data} inside a temporary
     * directory of its own, which closing it deletes: ZooKeeper's embedded server writes its generated
     * {@code zookeeper.configuration*.properties} beside the data directory, and with the data directory directly in
     * {@code /tmp} every start left one file there.
     */
    public static TestingServer start(int port) throws Exception {
        // in memory where it can be: every write (a member's lease renewal among them) is synced to the transaction log,
        // and a sync to this machine's disk can take longer than a lease
        Path shm = Path.of("/dev/shm");
        Path base = Files.isDirectory(shm) && Files.isWritable(shm) ? Files.createTempDirectory(shm, "erda-zookeeper-")
                : Files.createTempDirectory("erda-zookeeper-");
        try {
            Path data = Files.createDirectory(base.resolve("data"));
            InstanceSpec spec = new InstanceSpec(data.toFile(), port <= 0 ? -1 : port, -1, -1, true, 1, TICK_MILLIS, -1);
            return new OwnDirectory(spec, base);
        } catch (Exception e) {
            ClusterDemo.deleteTree(base);
            throw e;
        }
    }

    /** A TestingServer that deletes the directory holding its data directory when it closes. */
    private static final class OwnDirectory extends TestingServer {
        private final Path base;

        OwnDirectory(InstanceSpec spec, Path base) throws Exception {
            super(spec, true);
            this.base = base;
        }

        @Override
        public void close() throws IOException {
            try {
                super.close();
            } finally {
                ClusterDemo.deleteTree(base);
            }
        }
    }

    public static void main(String[] args) throws Exception {
        TestingServer zk = start(args.length > 0 ? Integer.parseInt(args[0]) : 0);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                zk.close();
            } catch (Exception e) {
                // exiting anyway
            }
        }));
        System.out.println("zookeeper listening on zk://127.0.0.1:" + zk.getPort() + "/erda");
        System.out.flush();
        Thread.currentThread().join();
    }
}
