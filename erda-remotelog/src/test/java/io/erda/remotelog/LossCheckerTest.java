package io.erda.remotelog;

import io.erda.remotelog.Method.Update;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.assertj.core.api.Assertions.assertThat;

/** The checker is itself tested: it must reject the anomalies it exists for. */
class LossCheckerTest {
    private static final LogLayout LAYOUT = new LogLayout(64, 64);

    private static byte[] logWith(long... sequences) {
        MemorySegment log = MemorySegment.ofArray(new byte[Math.toIntExact(LAYOUT.byteSize())]);
        for (int p = 0; p < sequences.length; p++) {
            if (sequences[p] > 0) {
                LAYOUT.encode(log, LAYOUT.recordOffset(p), sequences[p], p);
            }
        }
        return log.toArray(ValueLayout.JAVA_BYTE);
    }

    private static Recovery.Recovered recover(Update update, byte[] log) {
        return Recovery.recover(LAYOUT, update, new ResponderMemory.Image(log,
                new byte[Message.slotSize(64) * 4]));
    }

    @Test
    void aCompleteHistoryLosesNothing() {
        LossChecker checker = new LossChecker(LAYOUT);
        checker.acknowledged(0, 1);
        checker.acknowledged(1, 2);
        assertThat(checker.check(recover(Update.SINGLETON, logWith(1, 2, 3)))).isZero();
        assertThat(checker.lost()).isZero();
    }

    @Test
    void anAcknowledgedAppendMissingFromTheRecoveredLogIsLost() {
        LossChecker checker = new LossChecker(LAYOUT);
        checker.acknowledged(0, 1);
        checker.acknowledged(1, 2);
        checker.acknowledged(2, 3);
        // record 1 never persisted: the checksum scan stops there, so 2 is cut off too
        assertThat(checker.check(recover(Update.SINGLETON, logWith(1, 0, 3)))).isEqualTo(2);
        assertThat(checker.missing()).isEqualTo(2);
    }

    @Test
    void aTornAcknowledgedRecordIsLost() {
        LossChecker checker = new LossChecker(LAYOUT);
        checker.acknowledged(0, 1);
        byte[] log = logWith(1);
        log[LogLayout.HEADER_LENGTH + 20] ^= 1;
        assertThat(checker.check(recover(Update.SINGLETON, log))).isEqualTo(1);
    }

    @Test
    void anotherAppendsRecordAtAnAcknowledgedPositionIsLost() {
        LossChecker checker = new LossChecker(LAYOUT);
        checker.acknowledged(0, 7);
        assertThat(checker.check(recover(Update.SINGLETON, logWith(8)))).isEqualTo(1);
    }

    @Test
    void aTailPointerAheadOfItsRecordsIsTorn() {
        LossChecker checker = new LossChecker(LAYOUT);
        checker.acknowledged(0, 1);
        byte[] log = logWith(1, 0);
        LAYOUT.setTail(MemorySegment.ofArray(log), 2); // b persisted before a
        Recovery.Recovered recovered = recover(Update.COMPOUND, log);
        assertThat(recovered.tail()).isEqualTo(1);
        assertThat(checker.check(recovered)).isEqualTo(1);
        assertThat(checker.torn()).isEqualTo(1);
        assertThat(checker.missing()).isZero();
    }

    @Test
    void recoveryAppliesWholeMessagesFromPmReceiveBuffers() {
        LossChecker checker = new LossChecker(LAYOUT);
        checker.acknowledged(0, 1);
        int slot = Message.slotSize(64);
        MemorySegment buffers = MemorySegment.ofArray(new byte[slot * 4]);
        MemorySegment record = MemorySegment.ofArray(new byte[64]);
        LAYOUT.encode(record, 0, 1, 0);
        Message.encode(buffers, slot, Message.APPLY, Message.FLAG_TAIL, 0, 64, record, 1);
        Recovery.Recovered recovered = Recovery.recover(LAYOUT, Update.COMPOUND, new ResponderMemory.Image(
                logWith(), buffers.toArray(ValueLayout.JAVA_BYTE)));
        assertThat(recovered.tail()).isEqualTo(1);
        assertThat(checker.check(recovered)).isZero();
    }
}
