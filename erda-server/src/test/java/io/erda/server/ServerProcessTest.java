package io.erda.server;

import io.erda.core.testing.ShmTempDirFactory;

import static io.erda.server.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The server as a real process: it prints the URI it bound, and a kill loses no PUT that was written. */
class ServerProcessTest {
    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private Process startServer(Path store) throws Exception {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                ErdaServerMain.class.getName(), "--dir", store.toString(), "--listen", "tcp://127.0.0.1:0",
                "--heads", "2", "--table-capacity", "1k", "--region-size", "1m", "--segment-size", "64k"));
        return new ProcessBuilder(command).redirectErrorStream(true).start();
    }

    private static URI listeningUri(Process process) throws Exception {
        BufferedReader lines = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        String line;
        while ((line = lines.readLine()) != null) {
            if (line.startsWith("erda-server listening on ")) {
                return URI.create(line.substring("erda-server listening on ".length()));
            }
        }
        throw new AssertionError("server exited with " + process.waitFor() + " before listening");
    }

    @Test
    void killedServerReopensWithEveryWrittenPut() throws Exception {
        Path store = dir.resolve("store");
        Process first = startServer(store);
        try (RawClient client = RawClient.connect(listeningUri(first))) {
            for (int i = 0; i < 50; i++) {
                client.putAndWrite(bytes("key-" + i), bytes("value-" + i));
            }
            client.put(bytes("key-0"), 9, false); // reserved, never written: the crash tears it
        } finally {
            first.destroyForcibly();
            first.waitFor(10, TimeUnit.SECONDS);
        }
        Process second = startServer(store);
        try (RawClient client = RawClient.connect(listeningUri(second))) {
            for (int i = 0; i < 50; i++) {
                assertThat(client.getString(bytes("key-" + i))).isEqualTo("value-" + i);
            }
        } finally {
            second.destroy(); // SIGTERM: the shutdown hook closes the store
            assertThat(second.waitFor(10, TimeUnit.SECONDS)).isTrue();
        }
        try (Store reopened = Store.open(TestStores.config(dir, "tcp", Duration.ofSeconds(1)), new StoreStats())) {
            assertThat(reopened.recoverySummary().entries()).isEqualTo(50);
            assertThat(reopened.recoverySummary().rolledBack()).isZero();
        }
    }
}
