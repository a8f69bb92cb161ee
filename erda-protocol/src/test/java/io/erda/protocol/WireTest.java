package io.erda.protocol;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class WireTest {
    private final MemorySegment buf = Arena.ofAuto().allocate(1 << 16, 8);

    private static MemorySegment bytes(String s) {
        return MemorySegment.ofArray(s.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void putRequestRoundTripsAndKeyIsASliceOfTheBuffer() {
        int body = new PutRequest(false, 1000, bytes("user42")).encode(buf, MessageHeader.LENGTH);
        MessageHeader.write(buf, 0, MessageType.PUT, 7, WireStatus.OK, 0, body);
        assertThat(MessageHeader.check(buf, 0, MessageHeader.LENGTH + body)).isEqualTo(MessageType.PUT);
        PutRequest r = PutRequest.decode(buf, MessageHeader.LENGTH, body, 65535, 1 << 20);
        assertThat(r.delete()).isFalse();
        assertThat(r.valueLength()).isEqualTo(1000);
        assertThat(new String(r.key().toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8)).isEqualTo("user42");
        assertThat(MessageHeader.requestId(buf, 0)).isEqualTo(7);
    }

    @Test
    void aReplicaReservationCarriesItsSenderAfterTheKey() {
        ReplicaSender sender = new ReplicaSender(0x1122334455667788L, -1L, 42L);
        int body = PutRequest.replica(false, 100, bytes("user7"), 9, sender).encode(buf, 0);
        assertThat(body).isEqualTo(PutRequest.KEY_OFFSET + 5 + ReplicaSender.LENGTH);
        PutRequest r = PutRequest.decode(buf, 0, body, 65535, 1 << 20);
        assertThat(r.replica()).isTrue();
        assertThat(r.assignment()).isEqualTo(9);
        assertThat(r.sender()).isEqualTo(sender);
        assertThat(new String(r.key().toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8)).isEqualTo("user7");
        assertThatThrownBy(() -> PutRequest.decode(buf, 0, body - 1, 65535, 1 << 20))
                .isInstanceOf(WireFormatException.class).hasMessageContaining("replica PUT sender");
        assertThat(PutRequest.decode(buf, 0, new PutRequest(false, 100, bytes("user7")).encode(buf, 0), 65535, 1 << 20)
                .sender()).isNull();
    }

    @Test
    void putRequestOverLimitsNamesTheValueAndTheLimit() {
        int body = new PutRequest(false, 5_000_000, bytes("k")).encode(buf, 0);
        assertThatThrownBy(() -> PutRequest.decode(buf, 0, body, 65535, 1 << 20))
                .isInstanceOf(WireFormatException.class).hasMessage("value length 5000000 exceeds 1048576");
        buf.set(MessageHeader.INT, PutRequest.KEY_LENGTH_OFFSET, 70000);
        assertThatThrownBy(() -> PutRequest.decode(buf, 0, body, 65535, 1 << 20))
                .isInstanceOf(WireFormatException.class).hasMessage("key length 70000 exceeds 65535");
    }

    @Test
    void keyLongerThanTheBodyIsRejected() {
        int body = new KeyRequest(bytes("abcdef")).encode(buf, 0);
        assertThatThrownBy(() -> KeyRequest.decode(buf, 0, body - 1, 65535))
                .isInstanceOf(WireFormatException.class).hasMessageContaining("needs 14 bytes but the body has 13");
    }

    @Test
    void headerChecksMagicVersionTypeAndLength() {
        MessageHeader.write(buf, 0, MessageType.GET, 1, WireStatus.OK, 0, 100);
        assertThatThrownBy(() -> MessageHeader.check(buf, 0, 50)).hasMessageContaining("body length 100 exceeds the 34 bytes");
        buf.set(ValueLayout.JAVA_BYTE, MessageHeader.TYPE_OFFSET, (byte) 99);
        assertThatThrownBy(() -> MessageHeader.check(buf, 0, 200)).hasMessage("message type 99 is unknown");
        buf.set(MessageHeader.SHORT, 0, (short) 0x1234);
        assertThatThrownBy(() -> MessageHeader.check(buf, 0, 200)).hasMessage("magic 0x1234 is not 0xe7da");
    }

    @Test
    void storeInfoWithHeadArrayRoundTrips() {
        var heads = new HeadArray(List.of(
                new HeadArray.Head(0, 3, false, List.of(new RegionDescriptor(0x1000, 1 << 20, 5), new RegionDescriptor(0x9000, 1 << 20, 6))),
                new HeadArray.Head(1, 1, true, List.of(new RegionDescriptor(0x5000, 1 << 20, 7)))));
        var info = new StoreInfo(PersistenceMethod.SERVER_FLUSH, PmConfiguration.parse("MHP+!DDIO+PM-RQWRB"), PutMode.ONE_SIDED, 0, 2, 16, 64, 1040, 1 << 20, 1 << 16, 5_000_000_000L,
                65535, 1 << 16, 70000, new RegionDescriptor(1, 2, 3), new RegionDescriptor(4, 5, 6), heads);
        int n = info.encode(buf, 0);
        assertThat(n).isEqualTo(info.encodedLength());
        assertThat(StoreInfo.decode(buf, 0, n)).isEqualTo(info);
    }

    @Test
    void aBlockRequestRoundTripsAndAnUnknownPutModeIsRejectedByName() {
        int body = new BlockRequest(3, 1088, BlockRequest.NONE).encode(buf, 0);
        assertThat(BlockRequest.decode(buf, 0, body)).isEqualTo(new BlockRequest(3, 1088, BlockRequest.NONE));
        assertThatThrownBy(() -> BlockRequest.decode(buf, 0, body - 1)).isInstanceOf(WireFormatException.class)
                .hasMessageContaining("BLOCK needs 16 bytes");
        var info = new StoreInfo(PersistenceMethod.WSP, null, PutMode.RESERVE, 0, 1, 16, 64, 1040, 1 << 20, 1 << 16,
                5_000_000_000L, 65535, 1 << 16, 70000, new RegionDescriptor(1, 2, 3), new RegionDescriptor(4, 5, 6),
                new HeadArray(List.of()));
        int n = info.encode(buf, 0);
        assertThat(StoreInfo.decode(buf, 0, n).putMode()).isEqualTo(PutMode.RESERVE);
        buf.set(ValueLayout.JAVA_BYTE, 53, (byte) 2);
        assertThatThrownBy(() -> StoreInfo.decode(buf, 0, n)).isInstanceOf(WireFormatException.class)
                .hasMessageContaining("put mode 2");
        assertThatThrownBy(() -> PutMode.fromOption("cas")).hasMessageContaining("--put cas is not reserve or one-sided");
    }

    @Test
    void headArrayWithRegionCountBeyondTheBodyIsRejected() {
        var heads = new HeadArray(List.of(new HeadArray.Head(0, 1, false, List.of(new RegionDescriptor(1, 2, 3)))));
        int n = heads.encode(buf, 0);
        buf.set(MessageHeader.INT, HeadArray.HEADER_LENGTH + 8, 1000);
        assertThatThrownBy(() -> HeadArray.decode(buf, 0, n)).isInstanceOf(WireFormatException.class)
                .hasMessageContaining("region count of head 0 1000 exceeds 1");
    }

    @Test
    void garbageNeverEscapesAsAnythingButWireFormatException() {
        Random random = new Random(42);
        byte[] junk = new byte[256];
        for (int i = 0; i < 20_000; i++) {
            random.nextBytes(junk);
            MemorySegment s = MemorySegment.ofArray(junk.clone());
            int len = random.nextInt(257);
            for (Runnable decoder : List.<Runnable>of(
                    () -> MessageHeader.check(s, 0, len),
                    () -> PutRequest.decode(s, 0, len, 65535, 1 << 20),
                    () -> KeyRequest.decode(s, 0, len, 65535),
                    () -> GetReply.decode(s, 0, len),
                    () -> PutReply.decode(s, 0, len),
                    () -> FlushRequest.decode(s, 0, len),
                    () -> HeadArray.decode(s, 0, len),
                    () -> StoreInfo.decode(s, 0, len))) {
                try {
                    decoder.run();
                } catch (WireFormatException expected) {
                    assertThat(expected.getMessage()).isNotBlank();
                }
            }
        }
    }
}
