package io.erda.ffm.verbs;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * What {@code ibv_query_device(_ex)} says about a device that the fabric needs: the limits every queue it sizes must
 * respect, and the capabilities that differ between RNICs.
 *
 * @param capFlagsEx         {@code device_cap_flags_ex} of ibv_query_device_ex (0 when {@code extendedQueried} is
 *                           false: the provider has no query_device_ex)
 * @param atomicCap          IBV_ATOMIC_NONE, IBV_ATOMIC_HCA (atomic only against this device's own atomics) or
 *                           IBV_ATOMIC_GLOB (also against the host CPU's atomics on the same memory)
 */
public record DeviceAttributes(String firmwareVersion, int vendorId, int vendorPartId, int maxQp, int maxQpWr,
                               int maxSge, int maxCq, int maxCqe, int maxMr, int maxQpRdAtom, int atomicCap,
                               long capFlagsEx, boolean extendedQueried) {

    static DeviceAttributes decode(MemorySegment attr, long capFlagsEx, boolean extendedQueried) {
        MemorySegment fw = attr.asSlice(Verbs.ibv_device_attr$fw_ver$OFFSET, 64);
        String firmware = fw.getString(0);
        return new DeviceAttributes(firmware,
                (int) Verbs.ibv_device_attr$vendor_id.get(attr, 0L),
                (int) Verbs.ibv_device_attr$vendor_part_id.get(attr, 0L),
                (int) Verbs.ibv_device_attr$max_qp.get(attr, 0L),
                (int) Verbs.ibv_device_attr$max_qp_wr.get(attr, 0L),
                (int) Verbs.ibv_device_attr$max_sge.get(attr, 0L),
                (int) Verbs.ibv_device_attr$max_cq.get(attr, 0L),
                (int) Verbs.ibv_device_attr$max_cqe.get(attr, 0L),
                (int) Verbs.ibv_device_attr$max_mr.get(attr, 0L),
                (int) Verbs.ibv_device_attr$max_qp_rd_atom.get(attr, 0L),
                (int) Verbs.ibv_device_attr$atomic_cap.get(attr, 0L),
                capFlagsEx, extendedQueried);
    }

    /** Fills a {@code struct ibv_device_attr} (for fakes that answer ibv_query_device). */
    public void encode(MemorySegment attr) {
        MemorySegment a = attr.reinterpret(Verbs.ibv_device_attr.byteSize());
        a.fill((byte) 0);
        byte[] fw = firmwareVersion.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        MemorySegment.copy(fw, 0, a, ValueLayout.JAVA_BYTE, Verbs.ibv_device_attr$fw_ver$OFFSET, Math.min(fw.length, 63));
        Verbs.ibv_device_attr$vendor_id.set(a, 0L, vendorId);
        Verbs.ibv_device_attr$vendor_part_id.set(a, 0L, vendorPartId);
        Verbs.ibv_device_attr$max_qp.set(a, 0L, maxQp);
        Verbs.ibv_device_attr$max_qp_wr.set(a, 0L, maxQpWr);
        Verbs.ibv_device_attr$max_sge.set(a, 0L, maxSge);
        Verbs.ibv_device_attr$max_cq.set(a, 0L, maxCq);
        Verbs.ibv_device_attr$max_cqe.set(a, 0L, maxCqe);
        Verbs.ibv_device_attr$max_mr.set(a, 0L, maxMr);
        Verbs.ibv_device_attr$max_qp_rd_atom.set(a, 0L, maxQpRdAtom);
        Verbs.ibv_device_attr$atomic_cap.set(a, 0L, atomicCap);
    }

    /** Fills a {@code struct ibv_device_attr_ex}: {@link #encode} into orig_attr, plus device_cap_flags_ex. */
    public void encodeExtended(MemorySegment attrEx) {
        MemorySegment a = attrEx.reinterpret(Verbs.ibv_device_attr_ex.byteSize());
        a.fill((byte) 0);
        encode(a.asSlice(Verbs.ibv_device_attr_ex$orig_attr$OFFSET, Verbs.ibv_device_attr.byteSize()));
        Verbs.ibv_device_attr_ex$device_cap_flags_ex.set(a, 0L, capFlagsEx);
    }

    /** The device executes IBV_WR_ATOMIC_WRITE (kernel uapi IB_UVERBS_DEVICE_ATOMIC_WRITE, Linux >= 6.2). */
    public boolean atomicWrite() {
        return (capFlagsEx & Verbs.ERDA_DEVICE_ATOMIC_WRITE) != 0;
    }

    /** The device executes IBV_WR_FLUSH to persistence (IB_UVERBS_DEVICE_FLUSH_PERSISTENT, Linux >= 6.2). */
    public boolean flushPersistent() {
        return (capFlagsEx & Verbs.ERDA_DEVICE_FLUSH_PERSISTENT) != 0;
    }

    /** Remote atomics are atomic against the target CPU's own atomics on the same memory (IBV_ATOMIC_GLOB). */
    public boolean globalAtomics() {
        return atomicCap == Verbs.IBV_ATOMIC_GLOB;
    }

    /** The verbs.h name of {@link #atomicCap}. */
    public String atomicCapName() {
        return switch (atomicCap) {
            case Verbs.IBV_ATOMIC_NONE -> "ATOMIC_NONE";
            case Verbs.IBV_ATOMIC_HCA -> "ATOMIC_HCA";
            case Verbs.IBV_ATOMIC_GLOB -> "ATOMIC_GLOB";
            default -> "atomic_cap " + atomicCap;
        };
    }
}
