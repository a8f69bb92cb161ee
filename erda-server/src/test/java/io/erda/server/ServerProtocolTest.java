package io.erda.server;

import static io.erda.server.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import io.erda.protocol.HeadArray;
import io.erda.protocol.MessageType;
import io.erda.protocol.PutReply;
import io.erda.protocol.StoreInfo;
import io.erda.protocol.WireStatus;
import io.erda.protocol.memory.ObjectLayout;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The Erda protocol end to end over a real fabric (tcp and shm), with a hand-written client. */
class ServerProtocolTest extends RunningServer {
    @ParameterizedTest
    @MethodSource("io.erda.server.TestStores#schemes")
    void helloDescribesTheStoreAndItsRegions(String scheme) {
        try (RawClient client = start(scheme)) {
            StoreInfo info = client.hello();
            assertThat(info.headCount()).isEqualTo(TestStores.HEADS);
            assertThat(info.regionSize()).isEqualTo(TestStores.REGION);
            assertThat(info.segmentSize()).isEqualTo(TestStores.SEGMENT);
            assertThat(info.neighbourhood()).isEqualTo(32);
            assertThat(info.tableBuckets()).isEqualTo(TestStores.CAPACITY + 31);
            assertThat(info.maxKeyLength()).isEqualTo(ObjectLayout.MAX_KEY_LENGTH);
            assertThat(info.maxMessageLength()).isGreaterThanOrEqualTo(16 + 16 + ObjectLayout.MAX_KEY_LENGTH);
            assertThat(info.leaseNanos()).isEqualTo(Duration.ofSeconds(30).toNanos());
            assertThat(info.heads().heads()).hasSize(TestStores.HEADS)
                    .allSatisfy(h -> assertThat(h.regions()).hasSize(1));
            assertThat(info.stripes().rkey()).isEqualTo(info.table().rkey());
        }
    }

    @ParameterizedTest
    @MethodSource("io.erda.server.TestStores#schemes")
    void putThenOneSidedWriteIsReadableOneSidedAndTwoSided(String scheme) {
        try (RawClient client = start(scheme)) {
            client.hello();
            PutReply where = client.putAndWrite(bytes("apple"), bytes("red"));
            assertThat(where.objectLength()).isEqualTo((int) ObjectLayout.length(5, 3));
            assertThat(client.getString(bytes("apple"))).isEqualTo("red");

            byte[] object = client.read(where.address(), where.rkey(), where.objectLength());
            assertThat(ObjectLayout.validate(MemorySegment.ofArray(object), 0, object.length,
                    MemorySegment.ofArray(bytes("apple"))).isValid()).isTrue();

            client.putAndWrite(bytes("apple"), bytes("green"));
            assertThat(client.getString(bytes("apple"))).isEqualTo("green");
            assertThat(client.getString(bytes("pear"))).isNull();

            // every request received is counted by type, HELLO included (counted nowhere else)
            assertThat(TestStores.stat(server, "requests_hello")).isEqualTo(1);
            assertThat(TestStores.stat(server, "requests_put")).isEqualTo(2);
            assertThat(TestStores.stat(server, "requests_get")).isEqualTo(3);
            assertThat(TestStores.stat(server, "requests_heads")).isZero();
            assertThat(client.stats()).contains("requests_stats=1\n", "requests_redo_put=0\n",
                    "requests_raw_reserve=0\n", "requests_clean=0\n");
        }
    }

    @ParameterizedTest
    @MethodSource("io.erda.server.TestStores#schemes")
    void deleteWritesATombstoneAndGetReportsNotFound(String scheme) {
        try (RawClient client = start(scheme)) {
            client.putAndWrite(bytes("k"), bytes("v"));
            RawClient.Reply reply = client.put(bytes("k"), 0, true);
            assertThat(reply.status()).isEqualTo(WireStatus.OK);
            client.writeObject(RawClient.putReply(reply), bytes("k"), new byte[0], true);
            assertThat(client.getString(bytes("k"))).isNull();

            RawClient.Reply missing = client.put(bytes("never"), 0, true);
            assertThat(missing.status()).isEqualTo(WireStatus.NOT_FOUND);
        }
    }

    @ParameterizedTest
    @MethodSource("io.erda.server.TestStores#schemes")
    void flushAcceptsAReservedRangeAndRefusesOthers(String scheme) {
        try (RawClient client = start(scheme)) {
            PutReply where = client.putAndWrite(bytes("f"), bytes("value"));
            RawClient.Reply ok = client.flush(where.head(), where.chainOffset(), where.objectLength());
            assertThat(ok.type()).isEqualTo(MessageType.FLUSH_REPLY);
            assertThat(ok.status()).isEqualTo(WireStatus.OK);

            RawClient.Reply beyond = client.flush(where.head(), where.chainOffset() + 4096, 64);
            assertThat(beyond.status()).isEqualTo(WireStatus.UNKNOWN_ADDRESS);
            assertThat(beyond.error()).contains("outside its log");
            RawClient.Reply badHead = client.flush(77, 0, 8);
            assertThat(badHead.status()).isEqualTo(WireStatus.UNKNOWN_ADDRESS);
            assertThat(badHead.error()).contains("head 77 outside [0, 2)");
        }
    }

    @ParameterizedTest
    @MethodSource("io.erda.server.TestStores#schemes")
    void headsReplyGrowsWhenAChainGetsANewRegion(String scheme) {
        try (RawClient client = start(scheme)) {
            HeadArray before = client.heads();
            byte[] value = new byte[60_000];
            // 1 MiB regions of 64 KiB segments: one ~60 KB object per segment, so 17 PUTs of a key fill a region
            for (int i = 0; i < 20; i++) {
                client.putAndWrite(bytes("big"), value);
            }
            HeadArray after = client.heads();
            int head = RawClient.putReply(client.put(bytes("big"), 1, false)).head();
            assertThat(after.heads().get(head).regions()).hasSizeGreaterThan(before.heads().get(head).regions().size());
            assertThat(after.heads().get(head).generation()).isGreaterThan(before.heads().get(head).generation());
            assertThat(client.getString(bytes("big"))).hasSize(60_000);
        }
    }

    @ParameterizedTest
    @MethodSource("io.erda.server.TestStores#schemes")
    void statsCountOperationsAndBytes(String scheme) {
        try (RawClient client = start(scheme)) {
            client.putAndWrite(bytes("a"), bytes("1"));
            client.getString(bytes("a"));
            String stats = client.stats();
            assertThat(stats).contains("puts=1\n", "gets_two_sided=1\n", "keys=1\n", "table_capacity=1024\n");
            assertThat(stats).containsPattern("server_cpu_ns=[1-9]");
            // the workers waited for these requests: some wait loop spun, yielded, parked or blocked
            assertThat(stats).containsPattern("idle_[a-z_]+_(spins|yields|parks|blocks)=[1-9]");
            long written = Long.parseLong(stats.replaceAll("(?s).*nvm_bytes_written=(\\d+).*", "$1"));
            long local = Long.parseLong(stats.replaceAll("(?s).*nvm_bytes_local=(\\d+).*", "$1"));
            assertThat(written - local).isEqualTo(ObjectLayout.length(1, 1));
        }
    }
}
