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
import static org.assertj.core.api.Assertions.assertThat;

/** The background validator of a running server rolls back a reservation whose client never wrote. */
class LeaseOverNetworkTest {
    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    @ParameterizedTest
    @MethodSource("io.erda.server.TestStores#schemes")
    void validatorRollsBackAnAbandonedReservation(String scheme) throws InterruptedException {
        try (RequestServer server = RequestServer.start(TestStores.config(dir, scheme, Duration.ofMillis(200)));
             RawClient client = RawClient.connect(server.uri())) {
            client.putAndWrite(bytes("k"), bytes("one"));
            RawClient.Reply abandoned = client.put(bytes("k"), 3, false);
            assertThat(abandoned.status()).isEqualTo(WireStatus.OK);
            assertThat(RawClient.putReply(abandoned).leaseNanos()).isEqualTo(Duration.ofMillis(200).toNanos());

            while (!server.stats().contains("rollbacks=1\n")) {
                Thread.sleep(20);
            }
            assertThat(server.stats()).contains("pending_leases=0\n");
            assertThat(client.getString(bytes("k"))).isEqualTo("one");
            assertThat(client.repairHint(bytes("k"))).isEqualTo(Outcome.COMPLETE);

            PutReply next = client.putAndWrite(bytes("k"), bytes("two"));
            assertThat(next.chainOffset()).isGreaterThan(RawClient.putReply(abandoned).chainOffset());
            assertThat(client.getString(bytes("k"))).isEqualTo("two");
        }
    }
}
