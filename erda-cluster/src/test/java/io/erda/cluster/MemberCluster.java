package io.erda.cluster;

import io.erda.cluster.harness.ClusterDemo;
import io.erda.cluster.harness.MemberProcess;
import io.erda.cluster.harness.ZooKeeperMain;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.test.TestingServer;

/**
 * A ZooKeeper in this JVM and member processes started with options of the test's choosing, their stores under a
 * scratch directory; closing resumes any paused member, stops them all and deletes the directory.
 */
final class MemberCluster implements AutoCloseable {
    final TestingServer zookeeper;
    final URI zk;
    final Path root;
    final List<MemberProcess> members = new ArrayList<>();

    /** A member's options beside --zk, --id and --dir (its store: {@code root/member-ID}). */
    interface MemberOptions {
        List<String> of(int id, Path root);
    }

    /** Members 1 to {@code servers}, each started with its {@code options}. */
    MemberCluster(int servers, MemberOptions options) throws Exception {
        zookeeper = ZooKeeperMain.start(0);
        zk = URI.create("zk://127.0.0.1:" + zookeeper.getPort() + "/erda");
        root = ClusterDemo.scratch();
        for (int id = 1; id <= servers; id++) {
            List<String> args = new ArrayList<>(options.of(id, root));
            args.addAll(List.of("--dir", root.resolve("member-" + id).toString()));
            members.add(MemberProcess.start(zk, id, args.toArray(String[]::new)));
        }
    }

    MemberProcess member(int id) {
        return members.stream().filter(m -> m.id() == id).findFirst().orElseThrow();
    }

    @Override
    public void close() throws Exception {
        members.forEach(MemberProcess::resume);
        members.forEach(MemberProcess::close);
        zookeeper.close();
        ClusterDemo.deleteTree(root);
    }
}
