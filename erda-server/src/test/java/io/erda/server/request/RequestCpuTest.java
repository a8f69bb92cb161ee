package io.erda.server.request;

import io.erda.protocol.MessageType;
import java.lang.management.ManagementFactory;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** A served request's CPU: charged at its reply, its tail carried, monitoring and other threads' replies left out. */
class RequestCpuTest {
    private final LongAdder charged = new LongAdder();
    private final RequestCpu cpu = new RequestCpu(charged);

    /** Spends measurable CPU on this thread (the thread CPU clock may tick in steps of a few ms). */
    private static void work() {
        var threads = ManagementFactory.getThreadMXBean();
        long start = threads.getCurrentThreadCpuTime();
        long sink = 0;
        while (threads.getCurrentThreadCpuTime() - start < 2_000_000) {
            for (int i = 0; i < 10_000; i++) {
                sink += i * 31L ^ sink;
            }
        }
        if (sink == 42) {
            System.out.print(""); // keeps the loop from being removed
        }
    }

    @Test
    void aRequestIsChargedAtItsReplyAndItsTailAtTheNextReply() {
        cpu.begin(1);
        work();
        cpu.beforeReply(MessageType.PUT);
        long atReply = charged.sum();
        assertThat(atReply).as("the work before the reply").isGreaterThanOrEqualTo(2_000_000);
        work();
        cpu.end(MessageType.PUT);
        assertThat(charged.sum()).as("nothing charged after the reply").isEqualTo(atReply);
        long tail = cpu.carried();
        assertThat(tail).as("the tail is carried").isGreaterThanOrEqualTo(2_000_000);

        cpu.begin(1);
        cpu.beforeReply(MessageType.GET);
        assertThat(charged.sum() - atReply).as("the next reply charges the carried tail").isGreaterThanOrEqualTo(tail);
        assertThat(cpu.carried()).isZero();
    }

    @Test
    void aSampledRequestIsChargedItsWeightTimes() {
        cpu.begin(8);
        work();
        cpu.beforeReply(MessageType.PUT);
        assertThat(charged.sum()).isGreaterThanOrEqualTo(8 * 2_000_000L);
        cpu.end(MessageType.PUT);
        assertThat(cpu.carried() % 8).as("the tail, charged 8 times").isZero();
    }

    @Test
    void statsIsNotChargedAndTheCarryWaitsForAChargedReply() {
        cpu.begin(1);
        cpu.beforeReply(MessageType.PUT);
        work();
        cpu.end(MessageType.PUT);
        long before = charged.sum();
        long carried = cpu.carried();
        assertThat(carried).isPositive();

        cpu.begin(1);
        work();
        cpu.beforeReply(MessageType.STATS);
        work();
        cpu.end(MessageType.STATS);
        assertThat(charged.sum()).as("STATS charges nothing, not even the carry").isEqualTo(before);
        assertThat(cpu.carried()).as("and adds nothing to it").isEqualTo(carried);
    }

    @Test
    void aRequestAnsweredFromAnotherThreadIsCarriedToThisThreadsNextReply() throws InterruptedException {
        cpu.begin(1);
        work();
        Thread other = Thread.ofPlatform().start(() -> cpu.beforeReply(MessageType.PUT)); // an executor's reply
        other.join();
        assertThat(charged.sum()).as("another thread's reply charges nothing here").isZero();
        cpu.end(MessageType.PUT);
        long carried = cpu.carried();
        assertThat(carried).isGreaterThanOrEqualTo(2_000_000);

        cpu.begin(1);
        cpu.beforeReply(MessageType.PUT);
        assertThat(charged.sum()).isGreaterThanOrEqualTo(carried);
    }

    @Test
    void aRequestWithoutAReplyIsCarried() {
        cpu.begin(1);
        work();
        cpu.end(null); // a closed connection's receive: nothing answered
        assertThat(charged.sum()).isZero();
        assertThat(cpu.carried()).isGreaterThanOrEqualTo(2_000_000);
    }

    /**
     * After its exact requests a worker measures one request in SAMPLE, at random, and charges it that many
     * times: over many requests the weights add up to the request count (the estimate is unbiased), and most
     * requests read no clock.
     */
    @Test
    void afterTheExactRequestsOneInEightIsMeasuredAndChargedEightTimes() {
        java.util.Random random = new java.util.Random(42);
        for (long n = 0; n < RequestCpu.EXACT_REQUESTS; n++) {
            assertThat(RequestCpu.weight(n, random)).isEqualTo(1);
        }
        int requests = 800_000;
        long weights = 0;
        int measured = 0;
        for (int n = 0; n < requests; n++) {
            long w = RequestCpu.weight(RequestCpu.EXACT_REQUESTS + n, random);
            assertThat(w).isIn(0L, (long) RequestCpu.SAMPLE);
            weights += w;
            measured += w == 0 ? 0 : 1;
        }
        assertThat((double) weights / requests).isBetween(0.99, 1.01);
        assertThat((double) measured / requests).isBetween(0.9 / RequestCpu.SAMPLE, 1.1 / RequestCpu.SAMPLE);
    }
}
