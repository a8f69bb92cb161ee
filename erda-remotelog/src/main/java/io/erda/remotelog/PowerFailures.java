package io.erda.remotelog;

import io.erda.protocol.PmConfiguration;
import java.util.Random;

/**
 * One cell's power failures: appends with a method while the responder's memory is emulated for a configuration,
 * power failing at a random event of the wire or the responder, then recovery from what survived and the loss
 * checker's verdict, again and again on the recovered log.
 */
public final class PowerFailures {
    /** A power failure is armed at a uniformly drawn event among the next this many (a few appends). */
    public static final int MAX_EVENTS_BETWEEN_FAILURES = 40;

    /**
     * @param failures     power failures emulated
     * @param acknowledged appends reported durable before a failure
     * @param missing      acknowledged appends not in the recovered log, intact, where they belong
     * @param torn         compound: records the recovered tail pointer claimed that were not intact
     */
    public record Outcome(int failures, long acknowledged, long missing, long torn) {
        public long lost() {
            return missing + torn;
        }
    }

    private PowerFailures() {
    }

    /** Runs {@code failures} power failures for {@code method} in {@code configuration} on {@code log}. */
    public static Outcome run(RemoteLog log, PmConfiguration configuration, Method method, int failures, long seed) {
        return run(log, configuration, Transport.INFINIBAND, method, failures, seed);
    }

    /** As the other, with the requester's completions read as {@code transport}'s. */
    public static Outcome run(RemoteLog log, PmConfiguration configuration, Transport transport, Method method,
                              int failures, long seed) {
        LogLayout layout = log.layout();
        Random random = new Random(seed);
        LossChecker checker = new LossChecker(layout);
        byte[] empty = new byte[Math.toIntExact(layout.byteSize())];
        byte[] current = empty;
        log.server().restore(empty);
        int receiveBytes = Message.slotSize(layout.recordSize()) * LogServer.RECEIVE_BUFFERS;
        long position = 0;
        long sequence = 0;
        for (int f = 0; f < failures; f++) {
            if (position + MAX_EVENTS_BETWEEN_FAILURES >= layout.capacity()) {
                current = empty;
                log.server().restore(empty);
                checker.reset();
                position = 0;
            }
            ResponderMemory memory = new ResponderMemory(configuration, transport, current, receiveBytes,
                    random.nextLong());
            memory.armPowerFailure(1 + random.nextInt(MAX_EVENTS_BETWEEN_FAILURES));
            log.attach(memory);
            long firstPosition = position;
            long firstSequence = sequence + 1;
            while (memory.powerOn() && position < layout.capacity()) {
                sequence++;
                if (log.appender().append(method, position, sequence)) {
                    checker.acknowledged(position, sequence);
                    position++;
                }
            }
            memory.failPower();
            log.appender().sync();
            log.attach(null);
            requireHealthy(log);
            requirePlaced(log, method, firstPosition, position, firstSequence);
            Recovery.Recovered recovered = Recovery.recover(layout, method.update(), memory.crashImage());
            checker.check(recovered);
            current = recovered.log();
            log.server().restore(current);
            position = recovered.tail();
        }
        return new Outcome(failures, checker.acknowledgedTotal(), checker.missing(), checker.torn());
    }

    /**
     * The fabric and the responder really did their part: with power never cut in the live memory, every append of
     * the round acknowledged is in the live log, and a compound append's tail pointer is past it. Losses
     * then come from the emulated power failure only, never from a request that went astray.
     */
    private static void requirePlaced(RemoteLog log, Method method, long from, long to, long firstSequence) {
        LogLayout layout = log.layout();
        for (long p = from; p < to; p++) {
            long found = layout.intactSequence(log.server().log(), p);
            if (found < firstSequence) {
                throw new IllegalStateException(method.label() + ": the live log holds no record of this round at "
                        + "position " + p + " (found sequence " + found + ", round from " + firstSequence + ")");
            }
        }
        if (method.update() == Method.Update.COMPOUND && to > from && layout.tail(log.server().log()) < to) {
            throw new IllegalStateException(method.label() + ": the live tail pointer is "
                    + layout.tail(log.server().log()) + ", not past the round's last append " + (to - 1));
        }
    }

    static void requireHealthy(RemoteLog log) {
        if (log.server().failure() != null) {
            throw new IllegalStateException("the REMOTELOG server failed", log.server().failure());
        }
    }
}
