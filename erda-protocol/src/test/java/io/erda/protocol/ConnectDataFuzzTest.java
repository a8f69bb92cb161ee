package io.erda.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.erda.protocol.testing.Fuzzing;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * docs/ARCHITECTURE.md, [bad-input]: a connection request's private data, as the server's acceptor decodes it
 * (bad data rejects the connection with the reason).
 */
class ConnectDataFuzzTest {
    @FuzzTest
    void connectData(byte[] data) {
        try {
            ConnectData c = ConnectData.decode(data);
            assertThat(c.protocol()).isBetween(ConnectData.PROTOCOL_ERDA, ConnectData.PROTOCOL_RDMP_CC);
            assertThat(ConnectData.decode(c.encode())).isEqualTo(c);
            assertThat(Arrays.copyOf(c.encode(), 6)).isEqualTo(Arrays.copyOf(data, 6));
        } catch (WireFormatException e) {
            Fuzzing.rejected(e);
        }
    }

    @Test
    void seedCorpusIsWhatTheEncodersProduce() {
        Fuzzing.seedCorpus(ConnectDataFuzzTest.class, "connectData", Map.of(
                "erda", new ConnectData(ConnectData.PROTOCOL_ERDA).encode(),
                "redo-log", new ConnectData(ConnectData.PROTOCOL_REDO_LOG).encode(),
                "read-after-write", new ConnectData(ConnectData.PROTOCOL_READ_AFTER_WRITE).encode()));
    }
}
