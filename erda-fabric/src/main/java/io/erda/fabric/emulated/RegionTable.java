package io.erda.fabric.emulated;

import io.erda.fabric.Access;
import io.erda.fabric.Opcode;
import io.erda.fabric.Status;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * The rkey table of a software NIC, and the check every one-sided access passes before it touches memory:
 * known rkey, range inside the region, access flag present, atomics 8-byte aligned. The tcp engine checks on the
 * target; the shm initiator checks against the descriptors the target exported (cooperative: a hostile process
 * that maps the files could ignore them, as it could ignore anything in shared memory).
 *
 * @param <R> the provider's region type
 */
public final class RegionTable<R extends RegionTable.Entry> {

    /** What the check needs to know of a registered region. */
    public interface Entry {
        long address();

        long length();

        boolean allows(Access access);
    }

    /** Outcome of a check: the region, or why not. */
    public record Check<R>(R region, Status status, String detail) {
        public boolean ok() {
            return status == Status.SUCCESS;
        }
    }

    private final IntKeyMap<R> byKey = new IntKeyMap<>();
    private final AtomicInteger nextKey;

    public RegionTable(int firstKey) {
        this.nextKey = new AtomicInteger(firstKey);
    }

    /** Allocates a fresh key (never reused within this table, so a stale rkey can never reach a new region). */
    public int newKey() {
        return nextKey.getAndIncrement();
    }

    public void put(int key, R region) {
        byKey.put(key, region);
    }

    /** Puts every region under its key, in one rebuild of the table (see {@link IntKeyMap#putAll}). */
    public void putAll(java.util.Collection<? extends R> regions, java.util.function.ToIntFunction<? super R> keyOf) {
        byKey.putAll(regions, keyOf);
    }

    public R remove(int key) {
        return byKey.remove(key);
    }

    public R get(int key) {
        return byKey.get(key);
    }

    public java.util.Collection<R> all() {
        return byKey.values();
    }

    /**
     * The region a one-sided access of {@code length} bytes at {@code address} with {@code rkey} may touch, or null if
     * it fails any check ({@link #check} then says which). Allocates nothing: it runs on every READ and WRITE.
     */
    public R admit(Opcode opcode, long address, long length, int rkey) {
        R region = byKey.get(rkey);
        return region != null && problem(region, opcode, address, length) == null ? region : null;
    }

    /** Checks a one-sided access of {@code length} bytes at {@code address} with {@code rkey}. */
    public Check<R> check(Opcode opcode, long address, long length, int rkey) {
        R region = byKey.get(rkey);
        if (region == null) {
            return new Check<>(null, Status.REMOTE_ACCESS_ERROR, "rkey 0x" + Integer.toHexString(rkey) + " unknown");
        }
        return checkRegion(region, opcode, address, length, rkey);
    }

    /** The range, flag and alignment part of {@link #check}, for a region already looked up. */
    public static <R extends Entry> Check<R> checkRegion(R region, Opcode opcode, long address, long length, int rkey) {
        Problem problem = problem(region, opcode, address, length);
        if (problem == null) {
            return new Check<>(region, Status.SUCCESS, null);
        }
        return switch (problem) {
            case RANGE -> new Check<>(null, Status.REMOTE_ACCESS_ERROR, "range [0x" + Long.toHexString(address) + ", +"
                    + length + ") outside region 0x" + Long.toHexString(region.address()) + " of " + region.length()
                    + " bytes (rkey 0x" + Integer.toHexString(rkey) + ")");
            case ACCESS -> new Check<>(null, Status.REMOTE_ACCESS_ERROR, opcode + " needs " + needed(opcode)
                    + " on rkey 0x" + Integer.toHexString(rkey));
            case ALIGNMENT -> new Check<>(null, Status.REMOTE_INVALID_REQUEST, "atomic address 0x"
                    + Long.toHexString(address) + " is not 8-byte aligned");
        };
    }

    /** Which check an access fails first. */
    private enum Problem { RANGE, ACCESS, ALIGNMENT }

    /** The first check the access fails, or null if it passes them all. */
    private static Problem problem(Entry region, Opcode opcode, long address, long length) {
        long offset = address - region.address();
        if (length < 0 || offset < 0 || offset > region.length() || length > region.length() - offset) {
            return Problem.RANGE;
        }
        if (!region.allows(needed(opcode))) {
            return Problem.ACCESS;
        }
        if (opcode.isAtomic() && (address & 7) != 0) {
            return Problem.ALIGNMENT;
        }
        return null;
    }

    private static Access needed(Opcode opcode) {
        return switch (opcode) {
            case READ, FLUSH -> Access.REMOTE_READ;
            case WRITE, WRITE_WITH_IMM, ATOMIC_WRITE -> Access.REMOTE_WRITE;
            case CAS, FETCH_ADD -> Access.REMOTE_ATOMIC;
            default -> throw new IllegalArgumentException(opcode + " is not one-sided");
        };
    }
}
