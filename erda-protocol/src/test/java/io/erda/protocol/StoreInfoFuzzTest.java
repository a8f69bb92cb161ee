package io.erda.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.erda.protocol.testing.Fuzzing;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * docs/ARCHITECTURE.md, [bad-input]: what a client decodes from a server it connected to: HELLO_REPLY's
 * {@link StoreInfo} and the {@link HeadArray} of HEADS_REPLY and HEAD_STATE, on their own (the client hands the
 * decoders the whole body it received). The first byte picks the decoder.
 */
class StoreInfoFuzzTest {
    @FuzzTest
    void storeInfoOrHeadArray(byte[] data) {
        if (data.length == 0) {
            return;
        }
        MemorySegment s = MemorySegment.ofArray(data);
        int body = data.length - 1;
        try {
            if ((data[0] & 1) == 0) {
                StoreInfo info = StoreInfo.decode(s, 1, body);
                assertThat(info.encodedLength()).isLessThanOrEqualTo(body);
                MemorySegment again = MemorySegment.ofArray(new byte[info.encodedLength()]);
                info.encode(again, 0);
                assertThat(StoreInfo.decode(again, 0, info.encodedLength())).isEqualTo(info);
            } else {
                HeadArray heads = HeadArray.decode(s, 1, body);
                assertThat(heads.encodedLength()).isLessThanOrEqualTo(body);
                MemorySegment again = MemorySegment.ofArray(new byte[heads.encodedLength()]);
                heads.encode(again, 0);
                assertThat(HeadArray.decode(again, 0, heads.encodedLength())).isEqualTo(heads);
            }
        } catch (WireFormatException e) {
            Fuzzing.rejected(e);
        }
    }

    @Test
    void seedCorpusIsWhatTheEncodersProduce() {
        Map<String, byte[]> messages = MessageFuzzTest.seeds();
        Fuzzing.seedCorpus(StoreInfoFuzzTest.class, "storeInfoOrHeadArray", Map.of(
                "store-info", withSelector(0, messages.get("hello-reply")),
                "head-array", withSelector(1, messages.get("heads-reply"))));
    }

    /** The body of a whole message, behind the selector byte. */
    private static byte[] withSelector(int selector, byte[] message) {
        byte[] input = new byte[message.length - MessageHeader.LENGTH + 1];
        input[0] = (byte) selector;
        MemorySegment.copy(MemorySegment.ofArray(message), ValueLayout.JAVA_BYTE, MessageHeader.LENGTH,
                MemorySegment.ofArray(input), ValueLayout.JAVA_BYTE, 1, message.length - MessageHeader.LENGTH);
        return input;
    }
}
