package io.erda.server.store;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The leases a cleaning waits out ({@link Blocks}): a give-back ends exactly the block it names, at once. */
class BlocksTest {
    private static final long LEASE = 1_000_000_000L;
    private final Object oldChain = new Object();
    private final Object newChain = new Object();

    @Test
    void aGiveBackEndsTheBlockItNamesAndTheCleaningStopsWaitingForIt() {
        Blocks blocks = new Blocks();
        blocks.add(new Blocks.Block(0, 4096, 10, 10 + LEASE, oldChain));
        blocks.add(new Blocks.Block(1, 4096, 20, 20 + LEASE, oldChain));
        assertThat(blocks.lastDeadline(0, newChain, 100, 50)).isEqualTo(10 + LEASE);
        assertThat(blocks.giveBack(0, 4096, 60)).isTrue();
        assertThat(blocks.lastDeadline(0, newChain, 100, 70)).as("nothing left to wait for").isEqualTo(70);
        assertThat(blocks.live(70)).as("the other head's block").isEqualTo(1);
        assertThat(blocks.giveBack(0, 4096, 80)).as("given back before").isFalse();
    }
}
