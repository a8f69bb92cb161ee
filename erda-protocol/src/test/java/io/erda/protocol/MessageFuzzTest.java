package io.erda.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.erda.protocol.testing.Fuzzing;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * docs/ARCHITECTURE.md, [bad-input]: any received message, as the server's dispatcher and the client see it: the
 * header check, then the decoder of every body its type can carry. A malformed message throws
 * {@link WireFormatException} naming a value; anything else escaping is a finding. A message that decodes encodes
 * back to the same record (the decoders accept nothing the encoders cannot say).
 */
class MessageFuzzTest {
    static final int MAX_KEY = 65535;
    static final int MAX_VALUE = 1 << 20;

    @FuzzTest
    void message(byte[] data) {
        MemorySegment s = MemorySegment.ofArray(data);
        try {
            MessageType type = MessageHeader.check(s, 0, data.length);
            assertThat(MessageHeader.bodyLength(s, 0)).isBetween(0, data.length - MessageHeader.LENGTH);
            decodeBody(type, s, MessageHeader.LENGTH, MessageHeader.bodyLength(s, 0));
        } catch (WireFormatException e) {
            Fuzzing.rejected(e);
        }
    }

    private static void decodeBody(MessageType type, MemorySegment s, long at, int body) {
        switch (type) {
            case HELLO_REPLY -> roundTrips(StoreInfo.decode(s, at, body), StoreInfo::encode, StoreInfo::decode);
            case PUT, RAW_RESERVE, RDMP_ALLOC -> {
                PutRequest p = PutRequest.decode(s, at, body, MAX_KEY, MAX_VALUE);
                assertThat(p.key().byteSize()).isLessThanOrEqualTo(Math.min(MAX_KEY, body - PutRequest.KEY_OFFSET));
                PutRequest again = reencoded(p::encode, (b, o, n) -> PutRequest.decode(b, o, n, MAX_KEY, MAX_VALUE));
                assertThat(again.delete()).isEqualTo(p.delete());
                assertThat(again.valueLength()).isEqualTo(p.valueLength());
                assertSameBytes(again.key(), p.key());
                PutRequest.decode(s, at, body, MAX_KEY, Integer.MAX_VALUE); // Read After Write's limit
            }
            case PUT_REPLY, BLOCK_REPLY -> roundTrips(PutReply.decode(s, at, body), PutReply::encode, PutReply::decode);
            case BLOCK -> roundTrips(BlockRequest.decode(s, at, body), BlockRequest::encode, BlockRequest::decode);
            case GET, REPAIR_HINT, RDMP_LOOKUP -> {
                KeyRequest k = KeyRequest.decode(s, at, body, MAX_KEY);
                assertSameBytes(reencoded(k::encode, (b, o, n) -> KeyRequest.decode(b, o, n, MAX_KEY)).key(), k.key());
            }
            case GET_REPLY -> {
                GetReply g = GetReply.decode(s, at, body);
                assertSameBytes(reencoded(g::encode, GetReply::decode).value(), g.value());
            }
            case FLUSH, BLOCK_RETURN -> roundTrips(FlushRequest.decode(s, at, body), FlushRequest::encode, FlushRequest::decode);
            case HEADS_REPLY, HEAD_STATE -> roundTrips(HeadArray.decode(s, at, body), HeadArray::encode, HeadArray::decode);
            case REPAIR_HINT_REPLY -> roundTrips(RepairHintReply.decode(s, at, body), RepairHintReply::encode,
                    RepairHintReply::decode);
            case CLEAN -> roundTrips(CleanRequest.decode(s, at, body), CleanRequest::encode, CleanRequest::decode);
            case REDO_PUT -> {
                RedoPutRequest r = RedoPutRequest.decode(s, at, body, MAX_KEY, MAX_VALUE);
                RedoPutRequest again = reencoded((b, o) -> RedoPutRequest.encode(b, o, r.key(), r.value(), r.delete()),
                        (b, o, n) -> RedoPutRequest.decode(b, o, n, MAX_KEY, MAX_VALUE));
                assertThat(again.delete()).isEqualTo(r.delete());
                assertSameBytes(again.key(), r.key());
                assertSameBytes(again.value(), r.value());
            }
            case HERD_PUT -> {
                HerdPut h = HerdPut.decode(s, at, body, MAX_KEY, MAX_VALUE);
                HerdPut again = reencoded((b, o) -> HerdPut.encode(b, o, h.put().key(), h.put().delete() ? null : h.value()),
                        (b, o, n) -> HerdPut.decode(b, o, n, MAX_KEY, MAX_VALUE));
                assertThat(again.put().delete()).isEqualTo(h.put().delete());
                assertSameBytes(again.put().key(), h.put().key());
                assertSameBytes(again.value(), h.value());
            }
            case RDMP_COMMIT -> roundTrips(RdmpCommitRequest.decode(s, at, body), RdmpCommitRequest::encode,
                    RdmpCommitRequest::decode);
            case RAW_RESERVE_REPLY, RDMP_ALLOC_REPLY, RDMP_LOOKUP_REPLY -> roundTrips(RawReserveReply.decode(s, at, body), RawReserveReply::encode,
                    RawReserveReply::decode);
            case ERROR -> assertThat(ErrorReply.decode(s, at, body).getBytes(StandardCharsets.UTF_8).length)
                    .isLessThanOrEqualTo(3 * ErrorReply.MAX_LENGTH);
            case HELLO, HEADS, STATS, STATS_REPLY, CLEAN_REPLY, FLUSH_REPLY, REDO_PUT_REPLY, HERD_PUT_REPLY,
                 BLOCK_RETURN_REPLY,
                 RDMP_COMMIT_REPLY -> {
                // no body decoder: empty, or text the client shows as it is
            }
        }
    }

    interface Decoder<T> {
        T decode(MemorySegment s, long offset, int length);
    }

    interface Encoder<T> {
        int encode(T value, MemorySegment s, long offset);
    }

    private static <T> void roundTrips(T decoded, Encoder<T> encoder, Decoder<T> decoder) {
        assertThat(reencoded((s, o) -> encoder.encode(decoded, s, o), decoder)).isEqualTo(decoded);
    }

    private static <T> T reencoded(BodyEncoder encoder, Decoder<T> decoder) {
        MemorySegment buffer = MemorySegment.ofArray(new byte[1 << 21]);
        int n = encoder.encode(buffer, 8);
        return decoder.decode(buffer, 8, n);
    }

    private static void assertSameBytes(MemorySegment actual, MemorySegment expected) {
        assertThat(actual.toArray(ValueLayout.JAVA_BYTE)).isEqualTo(expected.toArray(ValueLayout.JAVA_BYTE));
    }

    // ---------------------------------------------------------------- seed corpus: one valid message of each type

    static Map<String, byte[]> seeds() {
        MemorySegment key = MemorySegment.ofArray("user42".getBytes(StandardCharsets.UTF_8));
        MemorySegment value = MemorySegment.ofArray("a value".getBytes(StandardCharsets.UTF_8));
        HeadArray heads = new HeadArray(List.of(
                new HeadArray.Head(0, 3, false, List.of(new RegionDescriptor(0x1000, 1 << 20, 5))),
                new HeadArray.Head(1, 1, true, List.of(new RegionDescriptor(0x5000, 1 << 20, 7),
                        new RegionDescriptor(0x9000, 1 << 20, 8)))));
        StoreInfo info = new StoreInfo(PersistenceMethod.SERVER_FLUSH, PmConfiguration.parse("MHP+!DDIO+PM-RQWRB"), PutMode.ONE_SIDED, 0, 2, 32, 32, 1055, 1 << 30, 8 << 20, 1_000_000_000L,
                MAX_KEY, 65_000, 70_000, new RegionDescriptor(0x100000, 16 * 1055, 9), new RegionDescriptor(0x200000, 64, 9),
                heads);
        Map<String, byte[]> seeds = new LinkedHashMap<>();
        seeds.put("hello", message(MessageType.HELLO, BodyEncoder.EMPTY));
        seeds.put("hello-reply", message(MessageType.HELLO_REPLY, info::encode));
        seeds.put("put", message(MessageType.PUT, new PutRequest(false, 100, key)::encode));
        seeds.put("delete", message(MessageType.PUT, new PutRequest(true, 0, key)::encode));
        seeds.put("replica-put", message(MessageType.PUT,
                PutRequest.replica(false, 100, key, 3, new ReplicaSender(77, 1, 2))::encode));
        seeds.put("put-reply", message(MessageType.PUT_REPLY, new PutReply(1, 128, 4096, 0x5000 + 4096, 7, 1_000_000_000L)::encode));
        seeds.put("get", message(MessageType.GET, new KeyRequest(key)::encode));
        seeds.put("get-reply", message(MessageType.GET_REPLY, new GetReply(value)::encode));
        seeds.put("flush", message(MessageType.FLUSH, new FlushRequest(1, 4096, 128)::encode));
        seeds.put("block", message(MessageType.BLOCK, new BlockRequest(1, 1088, 8)::encode));
        seeds.put("block-return", message(MessageType.BLOCK_RETURN, new FlushRequest(1, 8, 262_144)::encode));
        seeds.put("block-reply", message(MessageType.BLOCK_REPLY,
                new PutReply(1, 262_144, 8, 0x5000 + 8, 7, 1_000_000_000L)::encode));
        seeds.put("heads-reply", message(MessageType.HEADS_REPLY, heads::encode));
        seeds.put("head-state", message(MessageType.HEAD_STATE, heads::encode));
        seeds.put("repair-hint", message(MessageType.REPAIR_HINT, new KeyRequest(key)::encode));
        seeds.put("repair-hint-reply", message(MessageType.REPAIR_HINT_REPLY,
                new RepairHintReply(RepairHintReply.Outcome.ROLLED_BACK)::encode));
        seeds.put("clean", message(MessageType.CLEAN, new CleanRequest(1)::encode));
        seeds.put("redo-put", message(MessageType.REDO_PUT, (s, o) -> RedoPutRequest.encode(s, o, key, value, false)));
        seeds.put("raw-reserve", message(MessageType.RAW_RESERVE, new PutRequest(false, 7, key)::encode));
        seeds.put("raw-reserve-reply", message(MessageType.RAW_RESERVE_REPLY,
                new RawReserveReply(3, 0x7000, 11, 48, 1_000_000_000L)::encode));
        seeds.put("herd-put", message(MessageType.HERD_PUT, (s, o) -> HerdPut.encode(s, o, key, value)));
        seeds.put("herd-delete", message(MessageType.HERD_PUT, (s, o) -> HerdPut.encode(s, o, key, null)));
        seeds.put("rdmp-alloc", message(MessageType.RDMP_ALLOC, new PutRequest(false, 70_000, key)::encode));
        seeds.put("rdmp-alloc-reply", message(MessageType.RDMP_ALLOC_REPLY,
                new RawReserveReply(9, 0x8000, 12, 70_032, 1_000_000_000L)::encode));
        seeds.put("rdmp-commit", message(MessageType.RDMP_COMMIT, new RdmpCommitRequest(9, 0x8000)::encode));
        seeds.put("rdmp-lookup", message(MessageType.RDMP_LOOKUP, new KeyRequest(key)::encode));
        seeds.put("error", message(MessageType.ERROR, (s, o) -> ErrorReply.encode(s, o, "key length 70000 exceeds 65535")));
        return seeds;
    }

    /** A whole message as it travels: header, then the body {@code body} writes. */
    static byte[] message(MessageType type, BodyEncoder body) {
        MemorySegment s = MemorySegment.ofArray(new byte[1 << 16]);
        int n = body.encode(s, MessageHeader.LENGTH);
        MessageHeader.write(s, 0, type, 42, WireStatus.OK, 0, n);
        return s.asSlice(0, MessageHeader.LENGTH + n).toArray(ValueLayout.JAVA_BYTE);
    }

    @Test
    void seedCorpusIsWhatTheEncodersProduce() {
        Fuzzing.seedCorpus(MessageFuzzTest.class, "message", seeds());
    }
}
