package io.erda.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.client.ClientOptions;
import io.erda.client.ErdaClient;
import io.erda.cluster.client.ClusterClient;
import io.erda.cluster.client.ShardMap;
import io.erda.cluster.client.Zk;
import io.erda.cluster.harness.ClusterDemo;
import io.erda.cluster.harness.MemberProcess;
import io.erda.cluster.harness.VerifyingLoad;
import io.erda.protocol.memory.KeyHash;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;

/**
 * [cluster] recovery of lost shards from their last primary's store, with real processes (a ZooKeeper in this JVM,
 * three {@link ClusterServerMain} processes over tcp, the {@code zk://} client here): the whole cluster killed -9 and
 * restarted on its files serves every acknowledged key again; a server back with a wiped store is not re-adopted.
 */
class ClusterRecoveryTest extends ClusterProcessTest {
    private static final Duration MAP_WAIT = Duration.ofSeconds(40);

    /**
     * Keys PUT, overwritten and deleted through the cluster client, and verifying writers running until the moment every
     * member is killed -9 at once (a rack's power cut); every member restarted on its files: every shard serves again
     * (its last primary re-adopted), every acknowledged key reads back its last value, deleted keys stay deleted, and
     * once every shard has a filled backup again, each backup holds what its primary holds.
     */
    @Test
    void aWholeClusterKilledAndRestartedOnItsFilesServesEveryAcknowledgedKeyAgain() throws Exception {
        Map<String, String> expected = new HashMap<>();
        ShardMap before;
        VerifyingLoad load;
        try (ClusterClient client = ClusterClient.connect(ClientOptions.of(zk).withPoolSize(4)
                .withOperationTimeout(Duration.ofSeconds(2)))) {
            before = client.shardMap();
            loadStaticKeys(client, expected);
            load = new VerifyingLoad(client, SHARDS, 3, 100, "live-");
            try (load) {
                load.awaitEveryKey();
                Thread.sleep(300);
                killAll(); // the writers' PUTs in flight fail (not acknowledged) once the client gives up
            }
        }
        assertThat(load.acknowledgedPuts()).isGreaterThanOrEqualTo(300);

        long restartStarted = System.nanoTime();
        long lastStarted = restartAll(Set.of());
        long[] serving = new long[1];
        try (ClusterClient client = ClusterClient.connect(ClientOptions.of(zk).withPoolSize(4))) {
            ShardMap back = client.awaitMap(m -> !m.lost() && IntStream.range(0, SHARDS)
                    .allMatch(s -> m.session(m.primary(s)) != before.session(m.primary(s))), MAP_WAIT);
            for (int s = 0; s < SHARDS; s++) {
                // its primary before the kill, or that one's full backup, promoted while still registered (its death
                // not yet noticed) and so the shard's last primary: either holds every acknowledged PUT of it
                assertThat(back.primary(s)).as("shard %d's primary", s).isIn(before.primary(s), before.backup(s));
                byte[] probe = keyOfShard(back, s);
                client.put(probe, bytes("probe")); // served: a PUT acknowledged on every shard
                assertValue(client.get(probe), "probe", "probe of shard " + s);
                client.delete(probe);
            }
            serving[0] = System.nanoTime();
            System.out.printf("whole-cluster restart: shards %d, servers %d, acknowledged PUTs %d, every shard serving "
                    + "%d ms after the last server's restart (%d ms after the restarts began)%n", SHARDS, SERVERS,
                    load.acknowledgedPuts(), (serving[0] - lastStarted) / 1_000_000,
                    (serving[0] - restartStarted) / 1_000_000);

            assertThat(load.lost(client)).as("acknowledged PUTs lost").isZero();
            for (Map.Entry<String, String> e : expected.entrySet()) {
                assertValue(client.get(bytes(e.getKey())), e.getValue(), e.getKey());
            }

            ShardMap full = client.awaitMap(m -> !m.lost() && !m.filling()
                    && IntStream.range(0, SHARDS).allMatch(s -> m.backup(s) != ShardMap.NONE), MAP_WAIT);
            for (int s = 0; s < SHARDS; s++) {
                try (ErdaClient backup = ErdaClient.connect(ClientOptions.of(serverUri(full.backup(s))))) {
                    for (Map.Entry<String, String> e : expected.entrySet()) {
                        if (full.shardOf(KeyHash.hash(bytes(e.getKey()))) == s) {
                            assertValue(backup.get(bytes(e.getKey())), e.getValue(),
                                    e.getKey() + " on backup " + full.backup(s) + " of shard " + s);
                        }
                    }
                }
            }
        }
    }

    /**
     * Every member killed -9; the primary of shard 0 restarted on an empty directory (its store wiped), the others on
     * their files: the shards it was the last primary of stay lost (a client fails at once naming the shard), even once
     * it serves the other shards as a new server, and the coordinator says why; the other shards serve again.
     */
    @Test
    void aServerBackWithAWipedStoreIsNotReadoptedForTheShardsItHeld() throws Exception {
        Map<String, String> expected = new HashMap<>();
        ShardMap before;
        try (ClusterClient client = ClusterClient.connect(ClientOptions.of(zk).withPoolSize(4))) {
            before = client.shardMap();
            loadStaticKeys(client, expected);
        }
        int wiped = before.primary(0);
        Set<Integer> itsShards = IntStream.range(0, SHARDS).filter(s -> before.primary(s) == wiped).boxed()
                .collect(Collectors.toSet());
        killAll();
        awaitNoRegistrations(); // so every shard is lost at once, and its last primary is the one named before
        ClusterDemo.deleteTree(root.resolve("member-" + wiped));
        restartAll(Set.of(wiped));

        try (ClusterClient client = ClusterClient.connect(ClientOptions.of(zk).withPoolSize(4))) {
            ShardMap after = client.awaitMap(m -> !m.filling() && IntStream.range(0, SHARDS).allMatch(s ->
                    itsShards.contains(s) || m.state(s) == ShardMap.State.FULL && m.backup(s) != ShardMap.NONE
                            && m.session(m.primary(s)) != before.session(m.primary(s))), MAP_WAIT);
            assertThat(IntStream.range(0, SHARDS).filter(s -> after.backup(s) == wiped).count())
                    .as("the wiped server serves other shards, as a new server").isPositive();
            assertThat(after.store(wiped)).isNotEqualTo(before.store(wiped));
            Thread.sleep(1000); // several rounds of the coordinator with the wiped server named by its new store
            ShardMap later = client.shardMap();
            for (int s : itsShards) {
                assertThat(later.state(s)).as("shard %d, held by the wiped store", s).isEqualTo(ShardMap.State.LOST);
                assertThat(later.lostStore(s)).isEqualTo(before.store(wiped));
                byte[] key = keyOfShard(later, s);
                long start = System.nanoTime();
                assertThatThrownBy(() -> client.get(key)).hasMessageContaining("shard " + s + " is lost");
                assertThatThrownBy(() -> client.put(key, key)).hasMessageContaining("shard " + s + " is lost");
                assertThat((System.nanoTime() - start) / 1_000_000).as("failed at once (ms)").isLessThan(1000);
            }
            for (Map.Entry<String, String> e : expected.entrySet()) {
                if (!itsShards.contains(later.shardOf(KeyHash.hash(bytes(e.getKey()))))) {
                    assertValue(client.get(bytes(e.getKey())), e.getValue(), e.getKey());
                }
            }
        }
        int shown = itsShards.iterator().next();
        String why = "shard " + shown + " stays LOST: its last primary, server " + wiped + ", is back with store ";
        assertThat(members.stream().map(MemberProcess::log).anyMatch(log -> contains(log, why)
                && contains(log, "not store " + before.store(wiped)))).as("a member's log says: %s...", why).isTrue();
    }

    /** PUTs keys on every shard, overwrites some, deletes some; {@code expected} gets each key's last value (or null). */
    private static void loadStaticKeys(ClusterClient client, Map<String, String> expected) {
        for (int i = 0; i < 200; i++) {
            String key = "static-" + i;
            client.put(bytes(key), bytes(key + "=1"));
            expected.put(key, key + "=1");
        }
        for (int i = 0; i < 200; i += 2) {
            String key = "static-" + i;
            client.put(bytes(key), bytes(key + "=2"));
            expected.put(key, key + "=2");
        }
        for (int i = 0; i < 200; i += 5) {
            String key = "static-" + i;
            client.delete(bytes(key));
            expected.put(key, null);
        }
    }

    /** kill -9 of every member at once. */
    private void killAll() {
        CompletableFuture.allOf(members.stream().map(m -> CompletableFuture.runAsync(m::kill))
                .toArray(CompletableFuture[]::new)).join();
    }

    /**
     * Restarts every member; returns when the last one registered. The {@code wiped} ones (on empty directories) first,
     * each registered before the rest start: the coordinator then picks the re-adopted shards' backups with a wiped
     * server live and holding nothing, so it gets one (backups are picked by least load among live servers and are not
     * moved when a server joins later; restarted all at once, a wiped server registering last was left without a role,
     * which is correct behaviour but not what the test looks at). The others at once.
     */
    private long restartAll(Set<Integer> wiped) throws Exception {
        List<Integer> others = members.stream().map(MemberProcess::id).filter(id -> !wiped.contains(id)).toList();
        members.clear(); // killed already; each restarted one is added as it registers, so @AfterEach closes it
        for (int id : wiped) {
            assertThat(Files.exists(root.resolve("member-" + id))).isFalse();
            members.add(ClusterDemo.startMember(zk, id, SERVERS, SHARDS, root));
        }
        List<CompletableFuture<MemberProcess>> starts = others.stream().map(id -> CompletableFuture.supplyAsync(
                () -> ClusterDemo.startMember(zk, id, SERVERS, SHARDS, root))).toList();
        for (CompletableFuture<MemberProcess> start : starts) {
            members.add(start.join());
        }
        return System.nanoTime();
    }

    private void awaitNoRegistrations() throws Exception {
        try (CuratorFramework curator = Zk.connect(zk, 5000)) {
            long deadline = System.nanoTime() + MAP_WAIT.toNanos();
            while (!curator.getChildren().forPath(Zk.SERVERS).isEmpty()) {
                assertThat(System.nanoTime()).as("old registrations expired").isLessThan(deadline);
                Thread.sleep(50);
            }
        }
    }

    /** {@code value} is {@code expected} (null: absent). */
    private static void assertValue(byte[] value, String expected, String what) {
        assertThat(value == null ? null : new String(value, java.nio.charset.StandardCharsets.UTF_8)).as(what)
                .isEqualTo(expected);
    }

    private static boolean contains(Path log, String text) {
        try {
            return Files.readString(log).contains(text);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
