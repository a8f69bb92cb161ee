package io.erda.cluster;

import io.erda.cluster.client.ZkSecret;
import io.erda.server.ErdaServerMain;
import io.erda.server.ServerConfig;
import io.erda.server.ServerOptions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code erda-cluster-server --zk zk://host:port/erda --id N ...}: one member of a cluster ([cluster]). Prints
 * {@code erda-cluster-server ID listening on URI} once registered.
 */
@Command(name = "erda-cluster-server", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Runs one Erda server of a sharded, replicated cluster whose membership and shard map live in "
                + "ZooKeeper. On startup prints 'erda-cluster-server ID listening on URI'. SIGTERM closes it."})
public final class ClusterServerMain implements Callable<Integer> {
    @Option(names = "--zk", required = true, paramLabel = "URI", description = "The cluster: zk://host:port/path.")
    URI zk;

    @Option(names = "--id", required = true, paramLabel = "N", description = "This server's id, unique in the cluster.")
    int id;

    @Option(names = "--shards", paramLabel = "S", defaultValue = "8",
            description = "Shards of a new cluster (a power of two). Default: ${DEFAULT-VALUE}.")
    int shards;

    @Option(names = "--initial-servers", paramLabel = "N", defaultValue = "3",
            description = "Servers that must be registered before the first shard map is made. Default: ${DEFAULT-VALUE}.")
    int initialServers;

    @Option(names = "--session-timeout-ms", paramLabel = "MS", defaultValue = "2000",
            description = "ZooKeeper session timeout: how long a dead member's registration lingers (its shards fail "
                    + "over sooner, by its --member-lease-ms), and how long a restarted member waits for its old one to "
                    + "go. Default: ${DEFAULT-VALUE}.")
    int sessionTimeoutMillis;

    @Option(names = "--member-lease-ms", paramLabel = "MS", defaultValue = "400",
            description = "How long this member holds its roles without renewing its lease in ZooKeeper (renewed every "
                    + "quarter lease), and halts once it could not: the coordinator fails a member over once its lease "
                    + "has stood still that long (plus 1 %% for clock drift and 20 ms, less the clients' 150 ms map "
                    + "lease, which a promoted backup waits out before it acknowledges a PUT). Default: ${DEFAULT-VALUE}.")
    long memberLeaseMillis;

    @Option(names = "--zk-secret-file", paramLabel = "FILE",
            description = "The cluster's secret (first line, at least 16 characters; the file must be readable by its "
                    + "owner only): members authenticate with it and make every node of the cluster writable only with "
                    + "it (readable by anyone: clients need no secret). Default: environment variable "
                    + ZkSecret.ENVIRONMENT + ", else none (an open cluster, logged as such).")
    Path zkSecretFile;

    @Option(names = "--dir", paramLabel = "DIR", description = "PM directory of the store, and of its identity "
            + "(cluster-store-id): restarted on the same directory, a lost shard's last primary serves it again; a wiped "
            + "one is a new store. Default: a fresh one under /dev/shm, deleted at exit.")
    Path dir;

    @Option(names = "--listen", paramLabel = "URI", defaultValue = "tcp://127.0.0.1:0",
            description = "Fabric URI to listen on. Default: ${DEFAULT-VALUE}.")
    URI listen;

    /**
     * A member's reservations have a shorter lease than a lone server's ({@link ClusterServer#DEFAULT_RESERVATION_LEASE}):
     * a PUT in flight when its primary dies keeps its key from being copied to the new backup, and so from being written
     * again, until its reservation on the promoted backup is settled.
     */
    @Mixin
    ServerOptions store = new ServerOptions().withDefaultLease(ClusterServer.DEFAULT_RESERVATION_LEASE);

    @Option(names = "--workers", paramLabel = "N", defaultValue = "2", description = "Request threads. "
            + "Default: ${DEFAULT-VALUE}.")
    int workers;

    @Override
    public Integer call() throws Exception {
        boolean ephemeral = dir == null;
        Path directory = ephemeral ? Files.createTempDirectory(Path.of("/dev/shm"), "erda-cluster-" + id + "-") : dir;
        ServerConfig config = store.config(directory, listen, workers);
        ZkSecret secret = zkSecretFile != null ? ZkSecret.fromFile(zkSecretFile) : ZkSecret.fromEnvironment();
        ClusterServer member = new ClusterServer(zk, id, shards, initialServers, sessionTimeoutMillis,
                Duration.ofMillis(memberLeaseMillis), secret, config).start();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            member.close();
            if (ephemeral) {
                deleteTree(directory);
            }
            stopped.countDown();
        }, "erda-cluster-shutdown"));
        System.out.println("erda-cluster-server " + id + " listening on " + member.uri());
        System.out.flush();
        stopped.await();
        return 0;
    }

    private static void deleteTree(Path root) {
        try (Stream<Path> paths = Files.walk(root)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static void main(String[] args) {
        // a member's log is read against others' and a client's: times to the millisecond (unless the user chose)
        if (System.getProperty("java.util.logging.SimpleFormatter.format") == null) {
            System.setProperty("java.util.logging.SimpleFormatter.format", "%1$tF %1$tT.%1$tL %4$s %3$s: %5$s%6$s%n");
        }
        System.exit(ErdaServerMain.reportingBadValues(new CommandLine(new ClusterServerMain()), "erda-cluster-server")
                .execute(args));
    }
}
