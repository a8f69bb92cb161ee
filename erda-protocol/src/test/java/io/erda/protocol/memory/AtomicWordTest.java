package io.erda.protocol.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class AtomicWordTest {
    @Test
    void initialWordHasCurrentAndNoPrevious() {
        long word = AtomicWord.initial(42);
        assertThat(AtomicWord.newTag(word)).isTrue();
        assertThat(AtomicWord.current(word)).isEqualTo(42);
        assertThat(AtomicWord.previous(word)).isEqualTo(AtomicWord.NONE);
        assertThat(word & 1).as("frozen bit").isZero();
    }

    @Test
    void newVersionFlipsTagAndKeepsOldCurrentAsPrevious() {
        long word = AtomicWord.initial(10);
        long second = AtomicWord.withNewVersion(word, 20);
        assertThat(AtomicWord.newTag(second)).isFalse();
        assertThat(AtomicWord.offsetA(second)).as("old current not rewritten").isEqualTo(10);
        assertThat(AtomicWord.offsetB(second)).isEqualTo(20);
        assertThat(AtomicWord.current(second)).isEqualTo(20);
        assertThat(AtomicWord.previous(second)).isEqualTo(10);
        long third = AtomicWord.withNewVersion(second, 30);
        assertThat(AtomicWord.newTag(third)).isTrue();
        assertThat(AtomicWord.current(third)).isEqualTo(30);
        assertThat(AtomicWord.previous(third)).isEqualTo(20);
    }

    @Test
    void largestOffsetsSurviveEveryTransitionWithoutTouchingNeighbours() {
        long max = AtomicWord.MAX_OFFSET;
        long word = AtomicWord.withNewVersion(AtomicWord.initial(max), max - 1);
        assertThat(AtomicWord.current(word)).isEqualTo(max - 1);
        assertThat(AtomicWord.previous(word)).isEqualTo(max);
        word = AtomicWord.withNewVersion(word, max);
        assertThat(AtomicWord.current(word)).isEqualTo(max);
        assertThat(AtomicWord.previous(word)).isEqualTo(max - 1);
        assertThat(word & 1).as("frozen bit").isZero();
        assertThat(AtomicWord.newTag(word)).isTrue();
    }

    @Test
    void freezingKeepsTheVersionsAndUnfreezingRestoresTheWord() {
        long word = AtomicWord.withNewVersion(AtomicWord.initial(7), 9);
        long frozen = AtomicWord.frozen(word);
        assertThat(frozen).isNotEqualTo(word);
        assertThat(AtomicWord.isFrozen(frozen)).isTrue();
        assertThat(AtomicWord.isFrozen(word)).isFalse();
        assertThat(AtomicWord.current(frozen)).isEqualTo(9);
        assertThat(AtomicWord.previous(frozen)).isEqualTo(7);
        assertThat(AtomicWord.unfrozen(frozen)).isEqualTo(word);
        assertThat(AtomicWord.toString(frozen)).contains("frozen");
    }

    @Test
    void offsetBeyondThirtyOneBitsIsRejectedNamingIt() {
        assertThatThrownBy(() -> AtomicWord.initial(AtomicWord.MAX_OFFSET + 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("2147483648");
        assertThatThrownBy(() -> AtomicWord.withNewVersion(0, -1)).hasMessageContaining("-1");
    }

    @Test
    void rollbackReplacesCurrentWithoutFlippingTag() {
        long word = AtomicWord.withNewVersion(AtomicWord.initial(10), 20);
        long rolled = AtomicWord.withCurrent(word, AtomicWord.previous(word));
        assertThat(AtomicWord.newTag(rolled)).isEqualTo(AtomicWord.newTag(word));
        assertThat(AtomicWord.current(rolled)).isEqualTo(10);
    }

    @Test
    void cleanerWritesPreviousSlotThenTagFlipMakesItCurrent() {
        long word = AtomicWord.initial(10);
        long cleaning = AtomicWord.withPrevious(word, 99);
        assertThat(AtomicWord.current(cleaning)).isEqualTo(10);
        long done = AtomicWord.withTagFlipped(cleaning);
        assertThat(AtomicWord.current(done)).isEqualTo(99);
        assertThat(AtomicWord.previous(done)).isEqualTo(10);
    }
}
