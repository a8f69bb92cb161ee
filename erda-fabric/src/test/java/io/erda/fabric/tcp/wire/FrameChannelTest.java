package io.erda.fabric.tcp.wire;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** A frame written over a real loopback socket by a thread whose interrupt is pending. */
class FrameChannelTest {
    @Test
    void aPendingInterruptNeitherClosesTheSocketNorIsLost() throws Exception {
        try (ServerSocketChannel server = ServerSocketChannel.open()
                .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
             SocketChannel client = SocketChannel.open(server.getLocalAddress());
             SocketChannel accepted = server.accept();
             FrameChannel writer = new FrameChannel(client);
             FrameChannel reader = new FrameChannel(accepted)) {
            byte[] text = "after the interrupt".getBytes(StandardCharsets.UTF_8);
            FrameHeader out = new FrameHeader().reset(WireOpcode.SEND).payloadLength(text.length).sequence(7);

            Thread.currentThread().interrupt();
            try {
                writer.write(out, ByteBuffer.wrap(text));
                writer.write(out.sequence(8), ByteBuffer.wrap(text));
                assertThat(Thread.currentThread().isInterrupted()).as("the caller's interrupt is kept").isTrue();
            } finally {
                Thread.interrupted();
            }
            assertThat(client.isOpen()).as("socket still open").isTrue();

            FrameHeader in = new FrameHeader();
            for (long seq = 7; seq <= 8; seq++) {
                reader.readHeader(in);
                assertThat(in.opcode()).isEqualTo(WireOpcode.SEND);
                assertThat(in.sequence()).isEqualTo(seq);
                ByteBuffer body = ByteBuffer.allocate(in.payloadLength());
                reader.readFully(body);
                assertThat(new String(body.array(), StandardCharsets.UTF_8)).isEqualTo("after the interrupt");
            }
        }
    }
}
