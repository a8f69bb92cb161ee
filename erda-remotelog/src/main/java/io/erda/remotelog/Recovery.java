package io.erda.remotelog;

import io.erda.remotelog.Method.Update;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * What the responder does after a power failure (paper §4.1): apply the whole messages its PM receive buffers still
 * hold, in append order (a Send whose buffer is PM is the update itself, §3.2), then find the log's tail: for
 * singleton appends where the first record's checksum fails, for compound appends the tail pointer, checking that
 * every record below it is intact (a record below the tail pointer that is not is a torn append: b persisted before
 * a), and cutting the log there. Past the tail the log is cleared, so that an old record can never reappear behind
 * a newer tail.
 */
public final class Recovery {

    /**
     * @param log           the recovered log (cleared past the tail; compound: the tail pointer set to the tail)
     * @param tail          the number of records in the log
     * @param tornBelowTail compound: records the durable tail pointer claimed that were not intact
     */
    public record Recovered(byte[] log, long tail, int tornBelowTail) {
    }

    private Recovery() {
    }

    public static Recovered recover(LogLayout layout, Update update, ResponderMemory.Image image) {
        MemorySegment log = MemorySegment.ofArray(image.log().clone());
        replay(layout, update, log, MemorySegment.ofArray(image.receiveBuffers()));
        long tail = 0;
        int torn = 0;
        if (update == Update.SINGLETON) {
            while (tail < layout.capacity() && layout.intactSequence(log, tail) > 0) {
                tail++;
            }
        } else {
            long claimed = Math.min(Math.max(layout.tail(log), 0), layout.capacity());
            while (tail < claimed && layout.intactSequence(log, tail) > 0) {
                tail++;
            }
            for (long p = tail; p < claimed; p++) {
                if (layout.intactSequence(log, p) < 0) {
                    torn++;
                }
            }
            torn += layout.tail(log) > layout.capacity() || layout.tail(log) < 0 ? 1 : 0;
            layout.setTail(log, tail);
        }
        log.asSlice(LogLayout.HEADER_LENGTH + tail * layout.recordSize()).fill((byte) 0);
        return new Recovered(log.toArray(ValueLayout.JAVA_BYTE), tail, torn);
    }

    /** Applies the intact APPLY messages of the receive buffers to the log, oldest record first. */
    private static void replay(LogLayout layout, Update update, MemorySegment log, MemorySegment buffers) {
        int slot = Message.slotSize(layout.recordSize());
        List<Long> messages = new ArrayList<>();
        for (long at = 0; at + slot <= buffers.byteSize(); at += slot) {
            if (Message.intact(buffers, at, slot) && Message.kind(buffers, at) == Message.APPLY
                    && Message.length(buffers, at) == layout.recordSize()
                    && Message.where(buffers, at) >= 0 && Message.where(buffers, at) < layout.capacity()) {
                messages.add(at);
            }
        }
        messages.sort(Comparator.comparingLong(at -> buffers.get(LogLayout.longLayout(),
                at + Message.HEADER_LENGTH + LogLayout.SEQUENCE_OFFSET)));
        for (long at : messages) {
            long position = Message.where(buffers, at);
            MemorySegment.copy(buffers, at + Message.HEADER_LENGTH, log, layout.recordOffset(position),
                    layout.recordSize());
            if (update == Update.COMPOUND && (Message.flags(buffers, at) & Message.FLAG_TAIL) != 0) {
                layout.setTail(log, Math.max(layout.tail(log), Message.tail(buffers, at)));
            }
        }
    }
}
