package io.erda.server;

import static io.erda.server.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.fabric.Endpoint;
import io.erda.fabric.Fabric;
import io.erda.fabric.FabricException;
import io.erda.protocol.BodyEncoder;
import io.erda.protocol.ConnectData;
import io.erda.protocol.MessageHeader;
import io.erda.protocol.MessageType;
import io.erda.protocol.PutRequest;
import io.erda.protocol.RedoPutRequest;
import io.erda.protocol.WireStatus;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * docs/ARCHITECTURE.md, [bad-input]: bad input gets a clear error (or, without a usable header, a dropped
 * connection); others keep working.
 */
class BadInputTest extends RunningServer {
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private static void stillWorks(RawClient client, String key) {
        client.putAndWrite(bytes(key), bytes("fine"));
        assertThat(client.getString(bytes(key))).isEqualTo("fine");
    }

    @ParameterizedTest
    @MethodSource("io.erda.server.TestStores#schemes")
    void garbageWithoutAHeaderDropsThatConnectionOnly(String scheme) {
        try (RawClient good = start(scheme); RawClient bad = RawClient.connect(server.uri())) {
            good.putAndWrite(bytes("kept"), bytes("value"));
            assertThatThrownBy(() -> bad.raw(new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}))
                    .isInstanceOf(FabricException.class);
            assertThat(bad.endpoint().state()).isEqualTo(Endpoint.State.ERROR);
            stillWorks(good, "after");
            assertThat(good.getString(bytes("kept"))).isEqualTo("value");
            try (RawClient third = RawClient.connect(server.uri())) {
                stillWorks(third, "third");
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.erda.server.TestStores#schemes")
    void keyLengthOverTheLimitGetsKeyTooLong(String scheme) {
        try (RawClient client = start(scheme)) {
            RawClient.Reply reply = client.call(MessageType.PUT, (s, o) -> {
                s.set(INT, o + PutRequest.KEY_LENGTH_OFFSET, 70_000);
                s.set(INT, o + PutRequest.VALUE_LENGTH_OFFSET, 1);
                return PutRequest.KEY_OFFSET + 100;
            });
            assertThat(reply.type()).isEqualTo(MessageType.ERROR);
            assertThat(reply.status()).isEqualTo(WireStatus.KEY_TOO_LONG);
            assertThat(reply.error()).isEqualTo("key length 70000 exceeds 65535");
            stillWorks(client, "k");
        }
    }

    @ParameterizedTest
    @MethodSource("io.erda.server.TestStores#schemes")
    void valueOverTheSegmentLimitGetsValueTooLarge(String scheme) {
        try (RawClient client = start(scheme)) {
            RawClient.Reply reply = client.put(bytes("k"), 70_000, false);
            assertThat(reply.status()).isEqualTo(WireStatus.VALUE_TOO_LARGE);
            assertThat(reply.error()).contains("value length 70000", "exceeds the segment limit 65528");
            stillWorks(client, "k");
        }
    }

    @ParameterizedTest
    @MethodSource("io.erda.server.TestStores#schemes")
    void unknownTypeAndReplyTypesGetBadRequest(String scheme) {
        try (RawClient client = start(scheme)) {
            byte[] unknown = new byte[MessageHeader.LENGTH];
            MemorySegment s = MemorySegment.ofArray(unknown);
            MessageHeader.write(s, 0, MessageType.HELLO, 42, WireStatus.OK, 0, 0);
            s.set(ValueLayout.JAVA_BYTE, MessageHeader.TYPE_OFFSET, (byte) 99);
            RawClient.Reply reply = client.raw(unknown);
            assertThat(reply.requestId()).isEqualTo(42);
            assertThat(reply.status()).isEqualTo(WireStatus.BAD_REQUEST);
            assertThat(reply.error()).isEqualTo("message type 99 is unknown");

            RawClient.Reply replyType = client.call(MessageType.PUT_REPLY, BodyEncoder.EMPTY);
            assertThat(replyType.status()).isEqualTo(WireStatus.BAD_REQUEST);
            assertThat(replyType.error()).contains("PUT_REPLY");

            RawClient.Reply truncated = client.call(MessageType.PUT, (t, o) -> 4);
            assertThat(truncated.status()).isEqualTo(WireStatus.BAD_REQUEST);
            assertThat(truncated.error()).contains("needs 16 bytes but the body has 4");
            stillWorks(client, "k");
        }
    }

    @ParameterizedTest
    @MethodSource("io.erda.server.TestStores#schemes")
    void redoPutWithABadCrcIsRefusedNamingItAndNothingIsStored(String scheme) {
        try (RawClient erda = start(scheme);
             RawClient redo = RawClient.connect(server.uri(), ConnectData.PROTOCOL_REDO_LOG)) {
            RawClient.Reply reply = redo.call(MessageType.REDO_PUT, (s, o) -> {
                int length = RedoPutRequest.encode(s, o, MemorySegment.ofArray(bytes("crc")),
                        MemorySegment.ofArray(bytes("value")), false);
                s.set(ValueLayout.JAVA_BYTE, o + length - 1, (byte) 'X'); // flipped after the CRC was computed
                return length;
            });
            assertThat(reply.status()).isEqualTo(WireStatus.BAD_REQUEST);
            assertThat(reply.error()).contains("REDO_PUT CRC32C").contains("does not match");
            assertThat(redo.getString(bytes("crc"))).isNull();
            assertThat(redo.redoPut(bytes("crc"), bytes("good")).status()).isEqualTo(WireStatus.OK);
            assertThat(redo.getString(bytes("crc"))).isEqualTo("good");
            stillWorks(erda, "k");
        }
    }

    @ParameterizedTest
    @MethodSource("io.erda.server.TestStores#schemes")
    void erdaRequestsOnABaselineConnectionAreRefusedNamingTheProtocol(String scheme) {
        try (RawClient erda = start(scheme);
             RawClient raw = RawClient.connect(server.uri(), ConnectData.PROTOCOL_READ_AFTER_WRITE)) {
            RawClient.Reply reply = raw.put(bytes("k"), 1, false);
            assertThat(reply.status()).isEqualTo(WireStatus.UNSUPPORTED);
            assertThat(reply.error()).contains("PUT").contains("read-after-write");
            assertThat(raw.hello().protocol()).isEqualTo(ConnectData.PROTOCOL_READ_AFTER_WRITE);
            stillWorks(erda, "k");
        }
    }

    @ParameterizedTest
    @MethodSource("io.erda.server.TestStores#schemes")
    void badConnectDataIsRejectedWithTheReason(String scheme) {
        try (RawClient client = start(scheme); Fabric fabric = Fabric.open(server.uri())) {
            Endpoint endpoint = fabric.createEndpoint();
            assertThatThrownBy(() -> endpoint.connect(server.uri(), new byte[] {1, 2, 3, 4, 5, 6, 7, 8}))
                    .isInstanceOf(FabricException.class).hasMessageContaining("connect magic");
            endpoint.close();
            stillWorks(client, "k");
        }
    }
}
