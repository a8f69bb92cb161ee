package io.erda.fabric.emulated;

import io.erda.fabric.Completion;
import io.erda.fabric.Opcode;
import io.erda.fabric.Status;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Direct delivery: the provider's thread runs the idle consumer itself only when that saves a parked waiter's
 * wake-up, and never more of them at once than waiters are parked.
 */
class EmulatedCompletionQueueTest {
    private static Completion received(long wrId) {
        return Completion.success(wrId, Opcode.RECV, 64, null);
    }

    /** A thread waiting in take() for up to 10 s; returns once it has parked (past its spin and yield window). */
    private static CompletableFuture<Completion> parkedWaiter(EmulatedCompletionQueue queue) throws InterruptedException {
        CompletableFuture<Completion> taken = new CompletableFuture<>();
        Thread waiter = Thread.ofPlatform().daemon().start(() -> {
            try {
                taken.complete(queue.take(10, TimeUnit.SECONDS));
            } catch (Throwable e) {
                taken.completeExceptionally(e);
            }
        });
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (waiter.getState() != Thread.State.TIMED_WAITING && System.nanoTime() < deadline) {
            Thread.sleep(5); // spinning and yielding it is RUNNABLE; parked, TIMED_WAITING
        }
        assertThat(waiter.getState()).as("the waiter parked").isEqualTo(Thread.State.TIMED_WAITING);
        return taken;
    }

    @Test
    void aCompletionForAParkedWaiterIsConsumedOnTheDeliveringThread() throws Exception {
        EmulatedCompletionQueue queue = EmulatedCompletionQueue.withDirectDelivery(16);
        List<Thread> ranOn = new CopyOnWriteArrayList<>();
        assertThat(queue.consumeWhenIdle(c -> ranOn.add(Thread.currentThread()))).isTrue();
        CompletableFuture<Completion> waiter = parkedWaiter(queue);

        assertThat(queue.deliver(received(1))).as("consumed directly").isTrue();
        assertThat(ranOn).containsExactly(Thread.currentThread());
        assertThat(queue.size()).isZero();
        assertThat(waiter).as("the waiter was not woken for it").isNotDone();

        queue.add(received(2)); // add() never consumes: the waiter takes it
        assertThat(waiter.get(10, TimeUnit.SECONDS).wrId()).isEqualTo(2);
    }

    @Test
    void withoutAParkedWaiterTheCompletionIsQueued() {
        EmulatedCompletionQueue queue = EmulatedCompletionQueue.withDirectDelivery(16);
        List<Completion> consumed = new CopyOnWriteArrayList<>();
        queue.consumeWhenIdle(consumed::add);

        assertThat(queue.deliver(received(1))).isFalse();
        assertThat(consumed).isEmpty();
        assertThat(queue.poll().wrId()).isEqualTo(1);
    }

    @Test
    void errorsAndDeclinedCompletionsGoToTheWaiter() throws Exception {
        EmulatedCompletionQueue queue = EmulatedCompletionQueue.withDirectDelivery(16);
        List<Long> consumed = new CopyOnWriteArrayList<>();
        queue.consumeWhenIdle(c -> c.wrId() != 2 && consumed.add(c.wrId()));

        CompletableFuture<Completion> waiter = parkedWaiter(queue);
        assertThat(queue.deliver(Completion.error(1, Opcode.RECV, Status.WR_FLUSH_ERROR, null, "flushed"))).isFalse();
        assertThat(waiter.get(10, TimeUnit.SECONDS).wrId()).isEqualTo(1);

        waiter = parkedWaiter(queue);
        assertThat(queue.deliver(received(2))).as("declined").isFalse();
        assertThat(waiter.get(10, TimeUnit.SECONDS).wrId()).isEqualTo(2);

        assertThat(consumed).isEmpty();
    }

    @Test
    void noMoreConsumersRunAtOnceThanWaitersAreParked() throws Exception {
        EmulatedCompletionQueue queue = EmulatedCompletionQueue.withDirectDelivery(16);
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        queue.consumeWhenIdle(c -> {
            inside.countDown();
            try {
                return release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        });
        CompletableFuture<Completion> waiter = parkedWaiter(queue);
        CompletableFuture<Boolean> first = CompletableFuture.supplyAsync(() -> queue.deliver(received(1)));
        assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();

        // the one parked waiter's turn is taken: the second completion is queued and wakes the waiter
        assertThat(queue.deliver(received(2))).isFalse();
        assertThat(waiter.get(10, TimeUnit.SECONDS).wrId()).isEqualTo(2);
        release.countDown();
        assertThat(first.get(10, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void aCompletionDeliveredFromWithinAConsumerIsQueued() throws Exception {
        EmulatedCompletionQueue queue = EmulatedCompletionQueue.withDirectDelivery(16);
        List<Boolean> nested = new CopyOnWriteArrayList<>();
        queue.consumeWhenIdle(c -> c.wrId() != 1 || nested.add(queue.deliver(received(2))));
        CompletableFuture<Completion> waiter = parkedWaiter(queue);

        assertThat(queue.deliver(received(1))).isTrue();
        assertThat(nested).containsExactly(false);
        assertThat(waiter.get(10, TimeUnit.SECONDS).wrId()).isEqualTo(2);
    }

    @Test
    void onlyQueuesWhoseProviderDeliversReceivesTakeAConsumer() {
        assertThat(new EmulatedCompletionQueue(16).consumeWhenIdle(c -> true)).isFalse();
        assertThat(EmulatedCompletionQueue.withDirectDelivery(16).consumeWhenIdle(c -> true)).isTrue();
    }
}
