package io.erda.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.client.ErdaClient;
import io.erda.client.KeyValueClient;
import io.erda.client.cli.ErdaCli;
import io.erda.cluster.client.ClusterClient;
import io.erda.cluster.client.ShardMap;
import io.erda.cluster.harness.ClusterDemo;
import io.erda.cluster.harness.MemberProcess;
import io.erda.cluster.harness.ZooKeeperMain;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The {@code zk://} URI where a single server's URI goes ([cluster]): {@code KeyValueClient.connect(URI)} and erda-cli
 * (the YCSB binding's test is in erda-bench). Two member processes over tcp.
 */
class ClusterEntryPointsTest {
    private static TestingServer zookeeper;
    private static URI zk;
    private static Path root;
    private static final List<MemberProcess> MEMBERS = new ArrayList<>();

    @BeforeAll
    static void startCluster() throws Exception {
        zookeeper = ZooKeeperMain.start(0);
        zk = URI.create("zk://127.0.0.1:" + zookeeper.getPort() + "/erda");
        root = ClusterDemo.scratch();
        MEMBERS.addAll(ClusterDemo.startMembers(zk, 2, 4, root));
    }

    @AfterAll
    static void stopCluster() throws Exception {
        MEMBERS.forEach(MemberProcess::close);
        zookeeper.close();
        ClusterDemo.deleteTree(root);
    }

    @Test
    void keyValueClientConnectTakesTheClusterUri() {
        try (KeyValueClient client = KeyValueClient.connect(zk)) {
            assertThat(client).isInstanceOf(ClusterClient.class);
            byte[] key = "entry".getBytes(StandardCharsets.UTF_8);
            client.put(key, "point".getBytes(StandardCharsets.UTF_8));
            assertThat(client.get(key)).asString(StandardCharsets.UTF_8).isEqualTo("point");
            assertThat(((ClusterClient) client).shardMap().backup(0)).isNotEqualTo(ShardMap.NONE);
        }
    }

    @Test
    void erdaClientConnectIsOneServersAndRefusesTheClusterUriNamingTheDoor() {
        assertThatThrownBy(() -> ErdaClient.connect(zk)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(zk.toString()).hasMessageContaining("KeyValueClient.connect(URI)");
    }

    @Test
    void erdaCliTakesTheClusterUriAndRefusesOneServerCommandsNamingWhy() {
        assertThat(cli(0, "put", "cli-key", "cli-value")).isEqualTo("OK");
        assertThat(cli(0, "get", "cli-key")).isEqualTo("cli-value");
        assertThat(cli(0, "delete", "cli-key")).isEqualTo("OK");
        assertThat(cli(1, "get", "cli-key")).isEqualTo("(not found)");
        assertThat(cli(2, "stats")).contains("stats talks to one server").contains(zk.toString());
    }

    /** Runs erda-cli against the cluster; returns its output (stdout, else stderr), checking the exit code. */
    private static String cli(int exit, String... command) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        String[] argv = new String[command.length + 1];
        argv[0] = zk.toString();
        System.arraycopy(command, 0, argv, 1, command.length);
        int code = ErdaCli.run(new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), argv);
        String text = (out.size() > 0 ? out : err).toString(StandardCharsets.UTF_8).strip();
        assertThat(code).as("exit of erda-cli %s: %s", String.join(" ", command), text).isEqualTo(exit);
        return text;
    }
}
