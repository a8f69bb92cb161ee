package io.erda.ffm.verbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class QpInfoExchangeTest {
    private static QpInfo info(int qpNum, int psn, String privateData) {
        byte[] gid = new byte[QpInfo.GID_LENGTH];
        gid[0] = (byte) 0xfe;
        gid[15] = (byte) qpNum;
        return new QpInfo(qpNum, 0xABCD, gid, psn, privateData.getBytes());
    }

    @Test
    void bothSidesLearnEachOthersQueuePairOverRealSockets() throws Exception {
        QpInfo serverInfo = info(0x11, 0x00FF_FFFF, "rkey=17 method=read-after-write");
        QpInfo clientInfo = info(0x22, 1, "");
        try (ServerSocketChannel listener = ServerSocketChannel.open()) {
            listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            CompletableFuture<QpInfo> server = CompletableFuture.supplyAsync(() -> {
                try (SocketChannel peer = listener.accept()) {
                    return QpInfoExchange.exchange(peer, serverInfo);
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            try (SocketChannel client = SocketChannel.open(listener.getLocalAddress())) {
                assertThat(QpInfoExchange.exchange(client, clientInfo)).isEqualTo(serverInfo);
            }
            assertThat(server.get(10, TimeUnit.SECONDS)).isEqualTo(clientInfo);
        }
    }

    @Test
    void wireFormatIsTheDocumentedBigEndianLayout() {
        ByteBuffer b = QpInfoExchange.encode(info(0x01020304, 0x050607, "xy"));
        assertThat(b.remaining()).isEqualTo(QpInfoExchange.HEADER_LENGTH + 2);
        assertThat(b.getInt(0)).isEqualTo(0x45515049);
        assertThat(b.getShort(4)).isEqualTo((short) 1);
        assertThat(b.getShort(6)).isEqualTo((short) 0xABCD);
        assertThat(b.getInt(8)).isEqualTo(0x01020304);
        assertThat(b.getInt(12)).isEqualTo(0x050607);
        assertThat(b.get(16)).isEqualTo((byte) 0xfe);
        assertThat(b.getInt(32)).isEqualTo(2);
        assertThat(b.get(36)).isEqualTo((byte) 'x');
    }

    @Test
    void foreignBytesAreRejectedWithWhatWasFound() {
        ByteBuffer b = QpInfoExchange.encode(info(1, 1, ""));
        b.putInt(0, 0x47455420); // "GET "
        assertThatThrownBy(() -> QpInfoExchange.decode(b))
                .isInstanceOf(IOException.class)
                .hasMessage("not a QP info message: magic 0x47455420, expected 0x45515049");
    }

    @Test
    void psnWiderThan24BitsIsRefused() {
        assertThatThrownBy(() -> new QpInfo(1, 1, new byte[16], 0x0100_0000, new byte[0]))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("psn 16777216 exceeds 24 bits");
    }
}
