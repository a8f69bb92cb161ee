package io.erda.client;

import io.erda.protocol.RegionDescriptor;
import io.erda.protocol.memory.Key;
import io.erda.protocol.memory.LogAddress;
import io.erda.protocol.memory.ObjectCheck;
import io.erda.protocol.memory.ObjectLayout;
import io.erda.protocol.memory.Words;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * READs one object whose length is not known in advance (the entry holds only its offset): one READ of a guess,
 * and a second READ when the header says the object is longer. The guess is the size of the last object this
 * client saw, rounded up to 64 bytes and at least {@link #MIN_GUESS}, clamped to the end of the segment (an object
 * never spans two), so a workload of one value size costs one READ per object.
 */
final class ObjectReader {
    static final int MIN_GUESS = 256;
    private static final int CACHE_LINE = 64;

    private final ClientStats stats;
    /**
     * Size of the last complete object seen by any thread: a hint, races are harmless. A plain int (reads and writes
     * of it are atomic, JLS 17.7), written only when it changes: a volatile store was a full fence on every GET, and a
     * store of the same value by every thread of a pooled client bounces the line between their cores.
     */
    private int lastObjectLength = MIN_GUESS;

    ObjectReader(ClientStats stats) {
        this.stats = stats;
    }

    /**
     * What one object read found: only a {@link ObjectCheck#VALID} object has a value, and a valid tombstone has
     * none (null). The value is a slice of the connection's read buffer, valid until its next READ or request.
     */
    record Result(ObjectCheck check, MemorySegment value) {
        private static final Result TOMBSTONE = new Result(ObjectCheck.VALID, null);

        boolean isValid() {
            return check.isValid();
        }
    }

    /**
     * READs the object at chain offset {@code units} (8-byte units) of {@code head} into the connection's read
     * buffer at 0 and checks it against {@code key}. Never throws on garbage; an address the head array does not
     * know even after a refresh reads as {@link ObjectCheck#TRUNCATED} (nothing complete there for this client).
     */
    Result read(ClientConnection c, int head, long units, Key key) {
        StoreView view = c.view();
        long chainOffset = LogAddress.bytesForUnits(units);
        RegionDescriptor region = view.region(head, chainOffset);
        if (region == null) {
            stats.headRefreshes.increment();
            c.refreshHeads();
            region = view.region(head, chainOffset);
            if (region == null) {
                return new Result(ObjectCheck.TRUNCATED, null);
            }
        }
        long inRegion = LogAddress.offsetInRegion(chainOffset, view.info().regionSize());
        long limit = Math.min(view.bytesToSegmentEnd(chainOffset), region.length() - inRegion);
        long wanted = Math.max(Math.max(MIN_GUESS, roundUp(lastObjectLength)),
                ObjectLayout.align(ObjectLayout.HEADER_LENGTH + (long) key.length()));
        int guess = (int) Math.min(limit, wanted);
        long address = view.address(region, chainOffset);
        c.reads.ensure(guess);
        c.read(0, guess, address, region.rkey());
        stats.oneSidedReads.increment();
        long available = guess;
        long total = claimedLength(c.reads.segment());
        if (total > guess && total <= limit) {
            stats.objectTailReads.increment();
            stats.oneSidedReads.increment();
            if (c.reads.segment().byteSize() >= total) {
                c.read(guess, (int) (total - guess), address + guess, region.rkey());
            } else {
                c.reads.ensure(total);
                c.read(0, (int) total, address, region.rkey());
            }
            available = total;
        }
        MemorySegment s = c.reads.segment();
        ObjectCheck check = ObjectLayout.validate(s, 0, available, key.bytes());
        if (!check.isValid()) {
            return new Result(check, null);
        }
        long length = claimedLength(s);
        if (length != lastObjectLength) {
            lastObjectLength = (int) Math.min(length, Integer.MAX_VALUE);
        }
        if (s.get(ValueLayout.JAVA_BYTE, ObjectLayout.TYPE_OFFSET) == ObjectLayout.TYPE_TOMBSTONE) {
            return Result.TOMBSTONE;
        }
        int keyLength = Short.toUnsignedInt(s.get(Words.SHORT_U, ObjectLayout.KEY_LENGTH_OFFSET));
        int valueLength = s.get(Words.INT_U, ObjectLayout.VALUE_LENGTH_OFFSET);
        return new Result(check, s.asSlice(ObjectLayout.HEADER_LENGTH + keyLength, valueLength));
    }

    /** Padded length the header at 0 claims, or 0 if the header is not an object header. */
    private static long claimedLength(MemorySegment s) {
        byte type = s.get(ValueLayout.JAVA_BYTE, ObjectLayout.TYPE_OFFSET);
        if (type != ObjectLayout.TYPE_OBJECT && type != ObjectLayout.TYPE_TOMBSTONE) {
            return 0;
        }
        long keyLength = Short.toUnsignedInt(s.get(Words.SHORT_U, ObjectLayout.KEY_LENGTH_OFFSET));
        long valueLength = Integer.toUnsignedLong(s.get(Words.INT_U, ObjectLayout.VALUE_LENGTH_OFFSET));
        return ObjectLayout.align(ObjectLayout.HEADER_LENGTH + keyLength + valueLength);
    }

    private static long roundUp(long length) {
        return (length + CACHE_LINE - 1) & -CACHE_LINE;
    }
}
