package io.erda.cluster;

import java.io.File;
import java.nio.file.Files;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/**
 * {@code erda-zookeeper [PORT]}: a single real ZooKeeper server in this process (Curator's {@link TestingServer}),
 * its data in a temporary directory deleted at exit, for tests and {@code scripts/erda-cluster-demo}. Prints
 * {@code zookeeper listening on zk://127.0.0.1:PORT/erda} and runs until killed.
 */
public final class ZooKeeperMain {
    /** A short tick, so sessions of a couple of seconds are allowed (ZooKeeper's minimum is two ticks). */
    public static final int TICK_MILLIS = 200;

    private ZooKeeperMain() {
    }

    /** A started ZooKeeper on {@code port} (0: any free port). */
    public static TestingServer start(int port) throws Exception {
        File data = Files.createTempDirectory("erda-zookeeper-").toFile();
        InstanceSpec spec = new InstanceSpec(data, port <= 0 ? -1 : port, -1, -1, true, 1, TICK_MILLIS, -1);
        return new TestingServer(spec, true);
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
