package io.erda.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.DataOutputStream;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
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
        Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), LivenessChild.class.getName(), "77")
                .redirectErrorStream(true).start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
            String line = out.readLine();
            assertThat(line).as("the child's liveness port").startsWith("port ");
            int port = Integer.parseInt(line.substring(5).strip());
            Set<Long> ended = ConcurrentHashMap.newKeySet();
            try (DeathWatch watch = new DeathWatch(1, ended::add)) {
                watch.watch(Map.of(77L, new DeathWatch.Target(2, new InetSocketAddress(InetAddress.getLoopbackAddress(), port))));
                signal(child, "STOP");
                Thread.sleep(QUIET_MILLIS);
                assertThat(watch.ended()).as("a paused process has not ended").isEmpty();
                signal(child, "CONT");
                Thread.sleep(200);
                assertThat(watch.ended()).as("a resumed process has not ended").isEmpty();
                child.destroyForcibly(); // SIGKILL
                assertThat(child.waitFor(10, TimeUnit.SECONDS)).isTrue();
                awaitEnded(watch::ended, 77L);
                awaitEnded(() -> ended, 77L); // told once (the callback runs just after the session is recorded)
                assertThat(ended).containsExactly(77L);
            }
        } finally {
            child.destroyForcibly();
        }
    }

    @Test
    void aPortThatAnswersForAnotherSessionProvesNothingAndClosingItEndsItsOwn() throws Exception {
        LivenessPort port = new LivenessPort(URI.create("tcp://127.0.0.1:1"), () -> 5L);
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
        LivenessPort port = new LivenessPort(URI.create("tcp://127.0.0.1:1"), () -> 3L);
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

    private static void signal(Process p, String signal) throws Exception {
        assertThat(new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid())).start().waitFor()).isZero();
    }

    /** A process with a liveness port for session {@code args[0]}; prints {@code port N} and waits to be killed. */
    public static final class LivenessChild {
        public static void main(String[] args) throws Exception {
            long session = Long.parseLong(args[0]);
            LivenessPort port = new LivenessPort(URI.create("tcp://127.0.0.1:1"), () -> session);
            System.out.println("port " + port.address().getPort());
            System.out.flush();
            Thread.sleep(Long.MAX_VALUE);
        }
    }
}
