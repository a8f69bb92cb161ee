package io.erda.server;

import static io.erda.server.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * An interrupt alone does not stop a server thread: only {@link RequestServer#close} does, clearing its running flag
 * first. The JVM itself interrupts a thread now and then (closing a shared arena while the thread reads a segment of
 * it; RequestServer.workLoop), and a worker that took that for a stop was gone with every request it served.
 */
class StrayInterruptTest extends RunningServer {
    @ParameterizedTest
    @MethodSource("io.erda.server.TestStores#schemes")
    void workersValidatorAndAcceptorOutliveInterrupts(String scheme) throws Exception {
        Set<Thread> before = Thread.getAllStackTraces().keySet();
        List<Thread> serverThreads;
        try (RawClient client = start(scheme)) {
            client.hello();
            client.putAndWrite(bytes("k"), bytes("one"));
            serverThreads = Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> !before.contains(t))
                    .filter(t -> t.getName().startsWith("erda-worker-") || t.getName().equals("erda-lease-validator")
                            || t.getName().equals("erda-acceptor"))
                    .toList();
            assertThat(serverThreads).extracting(Thread::getName)
                    .contains("erda-worker-0", "erda-lease-validator", "erda-acceptor");

            for (int round = 0; round < 20; round++) {
                // while they wait for work (a worker parks 200 us after its last request). Not while a worker writes
                // a reply: a tcp socket closes when its writer is interrupted during the write, which no JVM-made
                // interrupt does (it comes while a segment is read); FrameChannelTest covers one set before a write.
                Thread.sleep(5);
                serverThreads.forEach(Thread::interrupt);
                client.putAndWrite(bytes("k"), bytes("v" + round));
            }
            Thread.sleep(100); // an interrupted thread that returned has ended by now

            assertThat(serverThreads).allSatisfy(t -> assertThat(t.isAlive()).as(t.getName() + " alive").isTrue());
            assertThat(client.getString(bytes("k"))).isEqualTo("v19");
            try (RawClient second = RawClient.connect(server.uri())) { // the acceptor still accepts
                second.hello();
                assertThat(second.getString(bytes("k"))).isEqualTo("v19");
            }
        }
        server.close(); // ... and close() still stops them
        server = null;
        for (Thread t : serverThreads) {
            t.join(5_000);
            assertThat(t.isAlive()).as(t.getName() + " ended by close()").isFalse();
        }
    }
}
