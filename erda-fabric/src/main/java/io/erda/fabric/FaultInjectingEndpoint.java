package io.erda.fabric;

import java.net.URI;
import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Predicate;

/**
 * Wraps any endpoint to inject faults into the WRITEs it posts, for tests: drop a WRITE, truncate it after N bytes,
 * delay it, or break the connection. Works on every provider because it acts where the request is posted:
 * <ul>
 *   <li>drop: the WRITE is posted with length 0, so it completes successfully and in order, and writes nothing
 *       (what a client that died before its data left would leave behind);</li>
 *   <li>truncate: the WRITE is posted with its first N bytes only (a torn write) and completes successfully;</li>
 *   <li>delay: the posting thread sleeps before posting (a slow but live writer; RC ordering keeps later requests
 *       behind it anyway);</li>
 *   <li>break: {@link Endpoint#abort()}, now or just before the next WRITE is posted (which then fails as a WRITE
 *       on a broken connection fails: the poster learns only that its outcome is unknown);</li>
 *   <li>kill: the process sends itself SIGKILL where the WRITE would be posted, after posting its first N bytes
 *       (N = 0: killed between whatever came before, such as a PUT's reservation, and its WRITE; N &gt; 0: killed in
 *       the middle of the WRITE). Fault campaigns use it to kill a client at a precise point, which a kill from
 *       outside reaches only by luck.</li>
 *   <li>before: an action runs on the posting thread just before the next matching request of any opcode is
 *       posted: it can hold the poster at a precise step of a protocol (a client stalled between two of its
 *       operations), or throw, and then the request is not posted and the poster gets the exception (a client that
 *       stopped there).</li>
 * </ul>
 * Each armed fault applies to the next matching WRITE (or WRITE_WITH_IMM; for "before", request) and is then used up.
 */
public final class FaultInjectingEndpoint implements Endpoint {

    private sealed interface Fault permits Drop, Truncate, Delay, Break, Kill, Before {
        Predicate<WorkRequest> matcher();
    }

    private record Drop(Predicate<WorkRequest> matcher) implements Fault { }

    private record Truncate(Predicate<WorkRequest> matcher, int keepBytes) implements Fault { }

    private record Delay(Predicate<WorkRequest> matcher, Duration delay) implements Fault { }

    private record Break(Predicate<WorkRequest> matcher) implements Fault { }

    private record Kill(Predicate<WorkRequest> matcher, int keepBytes) implements Fault { }

    private record Before(Predicate<WorkRequest> matcher, Runnable action) implements Fault { }

    /** How long a killed WRITE's first bytes get to be placed before the process kills itself. */
    private static final Duration KILL_GRACE = Duration.ofMillis(100);

    private final Endpoint delegate;
    private final ConcurrentLinkedQueue<Fault> armed = new ConcurrentLinkedQueue<>();

    public FaultInjectingEndpoint(Endpoint delegate) {
        this.delegate = delegate;
    }

    private static boolean isWrite(WorkRequest wr) {
        return wr.opcode() == Opcode.WRITE || wr.opcode() == Opcode.WRITE_WITH_IMM;
    }

    /** The next WRITE matching {@code matcher} writes nothing but completes successfully. */
    public FaultInjectingEndpoint dropNextWrite(Predicate<WorkRequest> matcher) {
        armed.add(new Drop(matcher));
        return this;
    }

    public FaultInjectingEndpoint dropNextWrite() {
        return dropNextWrite(wr -> true);
    }

    /** The next WRITE matching {@code matcher} writes only its first {@code keepBytes} bytes. */
    public FaultInjectingEndpoint truncateNextWrite(int keepBytes, Predicate<WorkRequest> matcher) {
        if (keepBytes < 0) {
            throw new IllegalArgumentException("keepBytes " + keepBytes + " is negative");
        }
        armed.add(new Truncate(matcher, keepBytes));
        return this;
    }

    public FaultInjectingEndpoint truncateNextWrite(int keepBytes) {
        return truncateNextWrite(keepBytes, wr -> true);
    }

    /** The next WRITE matching {@code matcher} is posted only after {@code delay}. */
    public FaultInjectingEndpoint delayNextWrite(Duration delay, Predicate<WorkRequest> matcher) {
        armed.add(new Delay(matcher, delay));
        return this;
    }

    public FaultInjectingEndpoint delayNextWrite(Duration delay) {
        return delayNextWrite(delay, wr -> true);
    }

    /**
     * At the next WRITE matching {@code matcher}, posts its first {@code keepBytes} bytes (none if 0), waits
     * briefly for them to be placed, and kills this process with SIGKILL: no shutdown hook, no further byte.
     */
    public FaultInjectingEndpoint killProcessAtNextWrite(int keepBytes, Predicate<WorkRequest> matcher) {
        if (keepBytes < 0) {
            throw new IllegalArgumentException("keepBytes " + keepBytes + " is negative");
        }
        armed.add(new Kill(matcher, keepBytes));
        return this;
    }

    /**
     * Breaks the connection just before the next WRITE matching {@code matcher} is posted, so that this WRITE, and
     * nothing before it, meets the broken connection whatever the timing of what came before.
     */
    public FaultInjectingEndpoint breakConnectionAtNextWrite(Predicate<WorkRequest> matcher) {
        armed.add(new Break(matcher));
        return this;
    }

    public FaultInjectingEndpoint breakConnectionAtNextWrite() {
        return breakConnectionAtNextWrite(wr -> true);
    }

    /**
     * Runs {@code action} on the posting thread just before the next request matching {@code matcher} (any opcode;
     * the matcher sees every request posted until one matches) is posted; if it throws, the request is not posted and
     * the exception reaches the poster.
     */
    public FaultInjectingEndpoint beforeNext(Predicate<WorkRequest> matcher, Runnable action) {
        armed.add(new Before(matcher, action));
        return this;
    }

    /** Breaks the connection now. */
    public void breakConnection() {
        delegate.abort();
    }

    /** Drops every fault armed but not yet used (say, when the operation it was meant for posted no WRITE). */
    public void disarm() {
        armed.clear();
    }

    /** Faults armed but not yet used. */
    public int armedFaults() {
        return armed.size();
    }

    @Override
    public void post(WorkRequest request) {
        for (Fault fault : armed) {
            if ((fault instanceof Before || isWrite(request)) && fault.matcher().test(request) && armed.remove(fault)) {
                request = apply(fault, request);
                break;
            }
        }
        delegate.post(request);
    }

    private WorkRequest apply(Fault fault, WorkRequest request) {
        return switch (fault) {
            case Drop d -> request.withLength(0);
            case Truncate t -> request.withLength(Math.min(t.keepBytes(), request.length()));
            case Kill k -> throw killAt(request, k.keepBytes());
            case Break b -> {
                delegate.abort();
                yield request;
            }
            case Before b -> {
                b.action().run();
                yield request;
            }
            case Delay d -> {
                try {
                    Thread.sleep(d.delay());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                yield request;
            }
        };
    }

    /** Never returns: the process dies here (the return type lets callers say so with {@code throw}). */
    private Error killAt(WorkRequest request, int keepBytes) {
        if (keepBytes > 0) {
            delegate.post(request.withLength(Math.min(keepBytes, request.length())));
        }
        try {
            Thread.sleep(KILL_GRACE);
            Process kill = new ProcessBuilder("kill", "-9", Long.toString(ProcessHandle.current().pid()))
                    .redirectErrorStream(true).start();
            kill.waitFor();
            Thread.sleep(Duration.ofSeconds(30)); // SIGKILL is asynchronous: never go on posting meanwhile
        } catch (java.io.IOException | InterruptedException e) {
            // fall through: the end is the same
        }
        Runtime.getRuntime().halt(137); // kill(1) missing or refused: the same end without SIGKILL
        return new AssertionError("Runtime.halt returned");
    }

    @Override
    public void connect(URI uri, byte[] privateData) {
        delegate.connect(uri, privateData);
    }

    @Override
    public void postRecv(RecvRequest request) {
        delegate.postRecv(request);
    }

    @Override
    public CompletionQueue sendQueue() {
        return delegate.sendQueue();
    }

    @Override
    public CompletionQueue recvQueue() {
        return delegate.recvQueue();
    }

    @Override
    public State state() {
        return delegate.state();
    }

    @Override
    public URI peer() {
        return delegate.peer();
    }

    @Override
    public byte[] peerPrivateData() {
        return delegate.peerPrivateData();
    }

    @Override
    public Fabric fabric() {
        return delegate.fabric();
    }

    @Override
    public void abort() {
        delegate.abort();
    }

    @Override
    public void close() {
        delegate.close();
    }
}
