package io.erda.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.cluster.client.ClusterClient;
import io.erda.cluster.client.ShardMap;
import io.erda.cluster.client.Zk;
import io.erda.cluster.client.ZkSecret;
import io.erda.cluster.harness.MemberProcess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * ZooKeeper ACLs ([cluster], "Security"), with real member processes that hold the cluster's secret: a ZooKeeper
 * client without it reads the map but cannot rewrite it, register, renew a lease or stand as coordinator; a cluster
 * client needs no secret; a member without it is refused, saying why.
 */
class ClusterSecurityTest {
    private MemberCluster cluster;
    private Path secret;

    @BeforeEach
    void start() throws Exception {
        secret = Files.createTempFile("erda-zk-secret-", "");
        Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rw-------"));
        Files.writeString(secret, "correct horse battery staple\n");
        cluster = new MemberCluster(2, (id, root) -> List.of("--shards", "2", "--initial-servers", "2",
                "--table-capacity", "4096", "--region-size", "4m", "--segment-size", "256k",
                "--zk-secret-file", secret.toString()));
    }

    @AfterEach
    void stop() throws Exception {
        cluster.close();
        Files.deleteIfExists(secret);
    }

    @Test
    void aProcessWithoutTheSecretReadsTheMapButCannotChangeTheCluster() throws Exception {
        try (ClusterClient client = ClusterClient.connect(cluster.zk)) {
            client.awaitMap(m -> m != null && !m.filling(), java.time.Duration.ofSeconds(30));
            client.put("k".getBytes(StandardCharsets.UTF_8), "v".getBytes(StandardCharsets.UTF_8));
            assertThat(client.get("k".getBytes(StandardCharsets.UTF_8))).asString(StandardCharsets.UTF_8).isEqualTo("v");
        }
        try (CuratorFramework outsider = Zk.connect(cluster.zk, 5000)) {
            byte[] map = outsider.getData().forPath(Zk.MAP);
            assertThat(ShardMap.decode(map).shards()).isEqualTo(2);
            assertThatThrownBy(() -> outsider.setData().forPath(Zk.MAP, map))
                    .isInstanceOf(KeeperException.NoAuthException.class);
            assertThatThrownBy(() -> outsider.create().withMode(CreateMode.EPHEMERAL).forPath(Zk.server(9), map))
                    .isInstanceOf(KeeperException.NoAuthException.class);
            assertThatThrownBy(() -> outsider.create().withMode(CreateMode.EPHEMERAL).forPath(Zk.COORDINATOR + "/x"))
                    .isInstanceOf(KeeperException.NoAuthException.class);
            assertThatThrownBy(() -> outsider.setData().forPath(Zk.lease(1), new byte[0]))
                    .isInstanceOf(KeeperException.NoAuthException.class);
            assertThatThrownBy(() -> outsider.delete().forPath(Zk.lease(1)))
                    .isInstanceOf(KeeperException.NoAuthException.class);
        }
    }

    /**
     * A backup takes a replica reservation only from its shard's primary: one with a forged tag (a process that read
     * the map, which anyone may, but has no secret) is refused as unauthorized, one rightly signed but naming another
     * session (a deposed primary) as not from the primary, and the primary's own, signed, is taken.
     */
    @Test
    void aBackupTakesReplicaReservationsOnlyFromItsPrimary() throws Exception {
        try (ClusterClient client = ClusterClient.connect(cluster.zk)) {
            ShardMap map = client.awaitMap(m -> m != null && !m.filling() && m.backup(0) != ShardMap.NONE,
                    java.time.Duration.ofSeconds(30));
            byte[] key = keyOfShard(map, 0);
            java.lang.foreign.MemorySegment k = java.lang.foreign.MemorySegment.ofArray(key);
            int primary = map.primary(0);
            int backup = map.backup(0);
            int assignment = Math.toIntExact(map.backupSince(0));
            ReplicaTags signed = new ReplicaTags(ZkSecret.fromFile(secret));
            // the registrations are watched apart from the map: the backup's may reach this client a moment later
            java.net.URI backupUri = client.serverUri(backup);
            for (long end = System.nanoTime() + 10_000_000_000L; backupUri == null && System.nanoTime() < end; ) {
                Thread.sleep(20);
                backupUri = client.serverUri(backup);
            }
            assertThat(backupUri).as("server %d's registration", backup).isNotNull();
            try (io.erda.client.ErdaClient toBackup = io.erda.client.ErdaClient.connect(
                    io.erda.client.ClientOptions.of(backupUri))) {
                assertThatThrownBy(() -> toBackup.reserveReplica(k, 8, false, assignment,
                        new io.erda.protocol.ReplicaSender(map.session(primary), 0x1234, 0x5678)))
                        .isInstanceOfSatisfying(io.erda.client.ErdaException.class,
                                e -> assertThat(e.status()).isEqualTo(io.erda.protocol.WireStatus.NOT_AUTHORIZED))
                        .hasMessageContaining("tag is wrong");
                assertThatThrownBy(() -> toBackup.reserveReplica(k, 8, false, assignment,
                        signed.sign(map.session(backup), k, 8, false, assignment)))
                        .isInstanceOfSatisfying(io.erda.client.ErdaException.class,
                                e -> assertThat(e.status()).isEqualTo(io.erda.protocol.WireStatus.NOT_PRIMARY))
                        .hasMessageContaining("only from its primary, server " + primary);
                assertThat(toBackup.reserveReplica(k, 8, false, assignment,
                        signed.sign(map.session(primary), k, 8, false, assignment)).objectLength()).isPositive();
            }
        }
    }

    private static byte[] keyOfShard(ShardMap map, int shard) {
        for (int i = 0; ; i++) {
            byte[] key = ("replica-" + i).getBytes(StandardCharsets.UTF_8);
            if (map.shardOf(io.erda.protocol.memory.KeyHash.hash(key)) == shard) {
                return key;
            }
        }
    }

    @Test
    void aMemberWithoutTheSecretIsRefusedSayingWhy() {
        assertThatThrownBy(() -> MemberProcess.start(cluster.zk, 3, "--shards", "2", "--initial-servers", "2",
                "--table-capacity", "4096", "--region-size", "4m", "--segment-size", "256k",
                "--dir", cluster.root.resolve("member-3").toString()))
                .hasMessageContaining("did not start");
        // its log says what was missing
        Path log = newestLog("member-3-");
        assertThat(log).content().contains("protected by a secret this member does not have");
    }

    @Test
    void aSecretFileOthersCanReadIsRefusedNamingItsMode() throws Exception {
        Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rw-r--r--"));
        assertThatThrownBy(() -> ZkSecret.fromFile(secret)).hasMessageContaining("rw-r--r--")
                .hasMessageContaining(secret.toString());
    }

    private static Path newestLog(String prefix) {
        try (var logs = Files.list(Path.of("target", "cluster-logs"))) {
            return logs.filter(p -> p.getFileName().toString().startsWith(prefix))
                    .max(java.util.Comparator.comparing(p -> p.toFile().lastModified())).orElseThrow();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
