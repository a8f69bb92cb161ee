package io.erda.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayDeque;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class ChunkedFifoTest {

    @Test
    void anEmptyQueueHasNothingToPeekOrPoll() {
        ChunkedFifo<Integer> q = new ChunkedFifo<>();
        assertThat(q.peekFirst()).isNull();
        assertThat(q.pollFirst()).isNull();
        assertThat(q.isEmpty()).isTrue();
        assertThatThrownBy(() -> q.addLast(null)).isInstanceOf(NullPointerException.class);
    }

    /** Runs of adds and polls of random lengths (up to several chunks, emptying it at times) against an ArrayDeque. */
    @Test
    void keepsFirstInFirstOutAcrossChunksAsAnArrayDequeDoes() {
        SplittableRandom random = new SplittableRandom(12);
        ChunkedFifo<Integer> q = new ChunkedFifo<>();
        ArrayDeque<Integer> model = new ArrayDeque<>();
        int next = 0;
        int emptied = 0;
        for (int run = 0; run < 2_000; run++) {
            int n = random.nextInt(3 * ChunkedFifo.CHUNK);
            if (random.nextBoolean()) {
                for (int i = 0; i < n; i++) {
                    q.addLast(next);
                    model.addLast(next++);
                }
            } else {
                for (int i = 0; i < n; i++) {
                    assertThat(q.peekFirst()).isEqualTo(model.peekFirst());
                    assertThat(q.pollFirst()).isEqualTo(model.pollFirst());
                }
                emptied += model.isEmpty() ? 1 : 0;
            }
            assertThat(q.size()).isEqualTo(model.size());
        }
        assertThat(emptied).as("runs that emptied the queue").isGreaterThan(10);
        while (!model.isEmpty()) {
            assertThat(q.pollFirst()).isEqualTo(model.pollFirst());
        }
        assertThat(q.isEmpty()).isTrue();
    }

    /** Exactly one chunk filled and drained, then used again: the indexes start over in the same chunk. */
    @Test
    void aFullChunkDrainedToEmptyIsUsedAgain() {
        ChunkedFifo<Integer> q = new ChunkedFifo<>();
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < ChunkedFifo.CHUNK; i++) {
                q.addLast(round * ChunkedFifo.CHUNK + i);
            }
            for (int i = 0; i < ChunkedFifo.CHUNK; i++) {
                assertThat(q.pollFirst()).isEqualTo(round * ChunkedFifo.CHUNK + i);
            }
            assertThat(q.pollFirst()).isNull();
        }
    }
}
