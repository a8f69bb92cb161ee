package io.erda.server;

import io.erda.core.testing.ShmTempDirFactory;
import io.erda.protocol.PutReply;
import io.erda.protocol.RepairHintReply.Outcome;
import io.erda.protocol.WireStatus;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static io.erda.server.TestStores.bytes;
import static io.erda.server.TestStores.stat;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The background validator of a running server rolls back a reservation whose client never wrote. The lease is
 * 200 ms, so a PUT whose WRITE lands later (the VM of test-softroce) is undone too: the test's own PUT is redone
 * until it settles complete, as a client that confirms after its lease would.
 */
class LeaseOverNetworkTest {
    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    @ParameterizedTest
    @MethodSource("io.erda.server.TestStores#schemes")
    void validatorRollsBackAnAbandonedReservation(String scheme) throws InterruptedException {
        try (RequestServer server = RequestServer.start(TestStores.config(dir, scheme, Duration.ofMillis(200)));
             RawClient client = RawClient.connect(server.uri())) {
            long rollbacksBefore = writeWithinLease(server, client, "one");
            RawClient.Reply abandoned = client.put(bytes("k"), 3, false);
            assertThat(abandoned.status()).isEqualTo(WireStatus.OK);
            assertThat(RawClient.putReply(abandoned).leaseNanos()).isEqualTo(Duration.ofMillis(200).toNanos());

            long giveUp = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (stat(server, "rollbacks") == rollbacksBefore) {
                assertThat(System.nanoTime() - giveUp).as("the abandoned reservation was never rolled back: %s",
                        server.stats()).isNegative();
                Thread.sleep(20);
            }
            assertThat(stat(server, "rollbacks")).isEqualTo(rollbacksBefore + 1);
            assertThat(server.stats()).contains("pending_leases=0\n");
            assertThat(client.getString(bytes("k"))).isEqualTo("one");
            assertThat(client.repairHint(bytes("k"))).isEqualTo(Outcome.COMPLETE);

            PutReply next = client.putAndWrite(bytes("k"), bytes("two"));
            assertThat(next.chainOffset()).isGreaterThan(RawClient.putReply(abandoned).chainOffset());
            assertThat(client.getString(bytes("k"))).isEqualTo("two");
        }
    }

    /**
     * PUTs {@code value} under "k" and waits until its lease is settled; again while the validator undid it (a WRITE
     * that landed after the 200 ms lease: a slow VM). Undoing a new key's only version removes its entry
     * (removed_entries), not a rollback. Returns the rollbacks counted so far.
     */
    private static long writeWithinLease(RequestServer server, RawClient client, String value) throws InterruptedException {
        for (int attempt = 1; ; attempt++) {
            long undone = stat(server, "rollbacks") + stat(server, "removed_entries");
            client.putAndWrite(bytes("k"), bytes(value));
            while (stat(server, "pending_leases") != 0) {
                Thread.sleep(20);
            }
            if (stat(server, "rollbacks") + stat(server, "removed_entries") == undone) {
                return stat(server, "rollbacks");
            }
            assertThat(attempt).as("PUT of %s rolled back %d times", value, attempt).isLessThan(4);
        }
    }
}
