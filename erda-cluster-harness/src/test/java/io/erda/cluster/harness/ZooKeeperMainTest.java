package io.erda.cluster.harness;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The in-process ZooKeeper keeps every file it writes in a directory of its own, and leaves none when closed. */
class ZooKeeperMainTest {
    @Test
    void itsFilesLiveInADirectoryOfItsOwnThatClosingDeletes() throws Exception {
        Path base;
        try (TestingServer zookeeper = ZooKeeperMain.start(0)) {
            base = zookeeper.getTempDirectory().toPath().getParent();
            assertThat(base.getFileName().toString()).startsWith("erda-zookeeper-");
            try (Stream<Path> files = Files.list(base)) {
                assertThat(files.map(p -> p.getFileName().toString()))
                        .as("the configuration ZooKeeper generates lies beside its data, in the server's directory")
                        .anyMatch(name -> name.startsWith("zookeeper.configuration") && name.endsWith(".properties"));
            }
        }
        assertThat(base).doesNotExist();
    }
}
