package io.erda.fabric;

import java.util.Objects;

/**
 * One send-queue work request ({@code ibv_send_wr} with a single scatter/gather element). Build with the static
 * factories; they check what can be checked locally (lengths, offsets, the alignment of atomics' remote word) and
 * throw IllegalArgumentException. Execution-time errors (bad rkey, out of range) come back as
 * completions, never as exceptions, as with verbs.
 *
 * @param wrId          caller's id, returned in the completion
 * @param opcode        READ, WRITE, WRITE_WITH_IMM, SEND, CAS, FETCH_ADD, ATOMIC_WRITE or FLUSH
 * @param signaled      whether a successful execution produces a completion (errors always do)
 * @param local         local region: source of WRITE/SEND, destination of READ and of the atomics' old value;
 *                      null only for FLUSH, ATOMIC_WRITE and zero-length requests
 * @param localOffset   offset in {@code local}
 * @param length        bytes to transfer (8 for atomics; the range length for FLUSH)
 * @param remoteAddress target address (one-sided operations)
 * @param rkey          target region key (one-sided operations)
 * @param compareAdd    CAS: expected value; FETCH_ADD: addend
 * @param swap          CAS: new value; ATOMIC_WRITE: the value written
 * @param immData       WRITE_WITH_IMM: 32 bits delivered in the target's receive completion
 */
public record WorkRequest(long wrId, Opcode opcode, boolean signaled, MemoryRegion local, long localOffset,
                          int length, long remoteAddress, int rkey, long compareAdd, long swap, int immData) {

    public static final int ATOMIC_LENGTH = 8;

    public WorkRequest {
        Objects.requireNonNull(opcode, "opcode");
        if (opcode == Opcode.RECV || opcode == Opcode.RECV_WITH_IMM) {
            throw new IllegalArgumentException(opcode + " is a completion opcode; post receives with RecvRequest");
        }
        if (length < 0) {
            throw new IllegalArgumentException("length " + length + " is negative");
        }
        if (localOffset < 0) {
            throw new IllegalArgumentException("local offset " + localOffset + " is negative");
        }
        if (local == null && length > 0 && opcode != Opcode.FLUSH && opcode != Opcode.ATOMIC_WRITE) {
            throw new IllegalArgumentException(opcode + " of " + length + " bytes needs a local region");
        }
        // Devices differ on a misaligned atomic (rxe: EINVAL from ibv_post_send, others: an error completion that
        // breaks the connection); refused here, it is the same clear error on every provider and nothing is sent.
        if (opcode.isAtomic() && (remoteAddress & (ATOMIC_LENGTH - 1)) != 0) {
            throw new IllegalArgumentException(opcode + " remote address 0x" + Long.toHexString(remoteAddress)
                    + " is not " + ATOMIC_LENGTH + "-byte aligned");
        }
    }

    public static WorkRequest read(long wrId, MemoryRegion local, long localOffset, int length, long remoteAddress, int rkey) {
        return new WorkRequest(wrId, Opcode.READ, true, local, localOffset, length, remoteAddress, rkey, 0, 0, 0);
    }

    public static WorkRequest write(long wrId, MemoryRegion local, long localOffset, int length, long remoteAddress, int rkey) {
        return new WorkRequest(wrId, Opcode.WRITE, true, local, localOffset, length, remoteAddress, rkey, 0, 0, 0);
    }

    public static WorkRequest writeWithImm(long wrId, MemoryRegion local, long localOffset, int length, long remoteAddress,
                                           int rkey, int immData) {
        return new WorkRequest(wrId, Opcode.WRITE_WITH_IMM, true, local, localOffset, length, remoteAddress, rkey, 0, 0, immData);
    }

    public static WorkRequest send(long wrId, MemoryRegion local, long localOffset, int length) {
        return new WorkRequest(wrId, Opcode.SEND, true, local, localOffset, length, 0, 0, 0, 0, 0);
    }

    /** A SEND that completes only if it fails (one object, where {@code send(...).unsignaled()} makes two). */
    public static WorkRequest unsignaledSend(long wrId, MemoryRegion local, long localOffset, int length) {
        return new WorkRequest(wrId, Opcode.SEND, false, local, localOffset, length, 0, 0, 0, 0, 0);
    }

    public static WorkRequest compareAndSwap(long wrId, MemoryRegion result, long resultOffset, long remoteAddress, int rkey,
                                             long expected, long newValue) {
        return new WorkRequest(wrId, Opcode.CAS, true, result, resultOffset, ATOMIC_LENGTH, remoteAddress, rkey, expected, newValue, 0);
    }

    public static WorkRequest fetchAdd(long wrId, MemoryRegion result, long resultOffset, long remoteAddress, int rkey, long add) {
        return new WorkRequest(wrId, Opcode.FETCH_ADD, true, result, resultOffset, ATOMIC_LENGTH, remoteAddress, rkey, add, 0, 0);
    }

    /** Atomically writes {@code value} to the 8-byte aligned word at {@code remoteAddress}. */
    public static WorkRequest atomicWrite(long wrId, long remoteAddress, int rkey, long value) {
        return new WorkRequest(wrId, Opcode.ATOMIC_WRITE, true, null, 0, ATOMIC_LENGTH, remoteAddress, rkey, 0, value, 0);
    }

    public static WorkRequest flush(long wrId, long remoteAddress, int length, int rkey) {
        return new WorkRequest(wrId, Opcode.FLUSH, true, null, 0, length, remoteAddress, rkey, 0, 0, 0);
    }

    /** The same request, unsignalled: no completion on success (errors still complete). */
    public WorkRequest unsignaled() {
        return new WorkRequest(wrId, opcode, false, local, localOffset, length, remoteAddress, rkey, compareAdd, swap, immData);
    }

    /** The same request with another length (fault injection uses it to truncate). */
    public WorkRequest withLength(int newLength) {
        return new WorkRequest(wrId, opcode, signaled, local, localOffset, newLength, remoteAddress, rkey, compareAdd, swap, immData);
    }
}
