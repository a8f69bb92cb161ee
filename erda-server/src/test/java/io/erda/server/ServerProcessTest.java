package io.erda.server;

import io.erda.core.testing.ShmTempDirFactory;

import static io.erda.server.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import io.erda.server.store.Store;
import io.erda.server.store.StoreStats;
import io.erda.testsupport.ChildProcess;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The server as a real process: it prints its persistence method, PM configuration and the taxonomy's verdict, and the
 * URI it bound, and a kill loses no PUT that was written.
 */
class ServerProcessTest {
    private static final Pattern LISTENING = Pattern.compile("^erda-server listening on (\\S+)");

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private ChildProcess startServer(Path store, String name, String... more) {
        List<String> args = new ArrayList<>(List.of("--dir", store.toString(), "--listen",
                "tcp://127.0.0.1:0", "--heads", "2", "--table-capacity", "1k", "--region-size", "1m", "--segment-size",
                "64k"));
        args.addAll(List.of(more));
        return ChildProcess.java(ErdaServerMain.class.getName()).name(name).args(args)
                .log(dir.resolve(name + ".log")).ready(LISTENING).start();
    }

    @Test
    void killedServerReopensWithEveryWrittenPut() throws Exception {
        Path store = dir.resolve("store");
        ChildProcess first = startServer(store, "first");
        assertThat(Files.readString(dir.resolve("first.log")))
                .contains("erda-server: persistence wsp in WSP+DDIO+DRAM-RQWRB, correct: ");
        try (RawClient client = RawClient.connect(URI.create(first.readyValue()))) {
            for (int i = 0; i < 50; i++) {
                client.putAndWrite(bytes("key-" + i), bytes("value-" + i));
            }
            client.put(bytes("key-0"), 9, false); // reserved, never written: the crash tears it
        } finally {
            first.kill();
        }
        ChildProcess second = startServer(store, "second", "--pm-config", "MHP+DDIO+PM-RQWRB");
        assertThat(Files.readString(dir.resolve("second.log")))
                .contains("erda-server: persistence wsp in MHP+DDIO+PM-RQWRB, incorrect: ");
        try (RawClient client = RawClient.connect(URI.create(second.readyValue()))) {
            for (int i = 0; i < 50; i++) {
                assertThat(client.getString(bytes("key-" + i))).isEqualTo("value-" + i);
            }
        } finally {
            second.stop(); // SIGTERM: the shutdown hook closes the store (SIGKILL, status 137, only after 10 s)
            assertThat(second.awaitExit(Duration.ofSeconds(1))).as("exit status after SIGTERM").isIn(0, 143);
        }
        try (Store reopened = TestStores.config(dir, "tcp", Duration.ofSeconds(1)).openStore(new StoreStats())) {
            assertThat(reopened.recoverySummary().entries()).isEqualTo(50);
            assertThat(reopened.recoverySummary().rolledBack()).isZero();
        }
    }
}
