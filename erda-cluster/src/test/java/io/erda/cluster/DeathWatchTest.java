package io.erda.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.erda.testsupport.ChildProcess;
import java.io.DataOutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@link DeathWatch} against {@link LivenessPort} over real sockets: a process killed with -9 is seen to end, the same
 * process paused (SIGSTOP) is not; a port that answers for another session, and a connection ended by a reset, prove
 * nothing; a member closing its port counts as its end.
 */
class DeathWatchTest {
    /** Long enough that a watcher would have acted on a wrong signal by then (it acts within milliseconds). */
    private static final long QUIET_MILLIS = 1000;

    @Test
    void aProcessKilledWithMinus9IsSeenToEndAndAPausedOneIsNot() throws Exception {
        try (ChildProcess child = ChildProcess.java(LivenessChild.class.getName()).name("liveness-child").args("77")
                .log(Path.of("target", "cluster-logs", "liveness-child.log")).ready(Pattern.compile("^port (\\d+)"))
                .timeout(Duration.ofSeconds(60)).start()) {
            int port = Integer.parseInt(child.readyValue());
            Set<Long> ended = ConcurrentHashMap.newKeySet();
            try (DeathWatch watch = new DeathWatch(1, ended::add)) {
                watch.watch(Map.of(77L, new DeathWatch.Target(2, new InetSocketAddress(InetAddress.getLoopbackAddress(), port))));
                child.pause();
                Thread.sleep(QUIET_MILLIS);
                assertThat(watch.ended()).as("a paused process has not ended").isEmpty();
                child.resume();
                Thread.sleep(200);
                assertThat(watch.ended()).as("a resumed process has not ended").isEmpty();
                child.kill(); // SIGKILL, and waits until it is gone
                assertThat(child.alive()).isFalse();
                awaitEnded(watch::ended, 77L);
                awaitEnded(() -> ended, 77L); // told once (the callback runs just after the session is recorded)
                assertThat(ended).containsExactly(77L);
            }
        }
    }

    @Test
    void aPortThatAnswersForAnotherSessionProvesNothingAndClosingItEndsItsOwn() throws Exception {
        LivenessPort port = new LivenessPort(URI.create("tcp://127.0.0.1:1"), 5L);
        try (DeathWatch right = new DeathWatch(1, s -> { }); DeathWatch wrong = new DeathWatch(1, s -> { })) {
            right.watch(Map.of(5L, new DeathWatch.Target(2, port.address())));
            wrong.watch(Map.of(6L, new DeathWatch.Target(2, port.address()))); // a port reused by another incarnation
            Thread.sleep(200);
            port.close();
            awaitEnded(right::ended, 5L);
            Thread.sleep(QUIET_MILLIS);
            assertThat(wrong.ended()).as("a port answering for session 5 proves nothing of session 6").isEmpty();
        } finally {
            port.close();
        }
    }

    @Test
    void aConnectionEndedByAResetProvesNothing() throws Exception {
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
             DeathWatch watch = new DeathWatch(1, s -> { })) {
            watch.watch(Map.of(9L, new DeathWatch.Target(2, (InetSocketAddress) listener.getLocalSocketAddress())));
            Socket accepted = listener.accept();
            new DataOutputStream(accepted.getOutputStream()).writeLong(9L);
            Thread.sleep(200);
            accepted.setSoLinger(true, 0);
            accepted.close(); // a reset, as a middlebox might send: not a process's end
            Thread.sleep(QUIET_MILLIS);
            assertThat(watch.ended()).isEmpty();
        }
    }

    @Test
    void itDoesNotWatchItself() throws Exception {
        LivenessPort port = new LivenessPort(URI.create("tcp://127.0.0.1:1"), 3L);
        try (DeathWatch watch = new DeathWatch(4, s -> { })) {
            watch.watch(Map.of(3L, new DeathWatch.Target(4, port.address())));
            Thread.sleep(200);
            port.close();
            Thread.sleep(QUIET_MILLIS);
            assertThat(watch.ended()).isEmpty();
        } finally {
            port.close();
        }
    }

    private static void awaitEnded(java.util.function.Supplier<Set<Long>> ended, long session) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!ended.get().contains(session) && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(ended.get()).as("sessions seen to end").contains(session);
    }

    /** A process with a liveness port for session {@code args[0]}; prints {@code port N} and waits to be killed. */
    public static final class LivenessChild {
        public static void main(String[] args) throws Exception {
            long session = Long.parseLong(args[0]);
            LivenessPort port = new LivenessPort(URI.create("tcp://127.0.0.1:1"), session);
            System.out.println("port " + port.address().getPort());
            System.out.flush();
            Thread.sleep(Long.MAX_VALUE);
        }
    }
}
