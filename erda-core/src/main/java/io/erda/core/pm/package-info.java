/**
 * Mapped PM files. {@link PmRegion} maps one file (MAP_SYNC on a DAX file system, else a shared mapping) behind its 4
 * KiB {@link PmFileHeader} (magic, format version, kind, geometry, CRC32C, mutable words), refuses a mismatch with a
 * {@link PmFormatException} naming found and expected, and makes a range durable with {@code persist} (cache-line
 * write-back, else msync). {@link io.erda.protocol.memory.Words} is the little-endian word access of every on-PM
 * format; {@link WriteLatencyModel} charges the emulated cost per written cache line. {@link PmFileModes} says who may
 * write a store: files are created {@code 0600} ({@code 0660} in a directory shared with a group), and one another user
 * could write is refused with a {@link PmPermissionException} (docs/ARCHITECTURE.md, "Security model").
 *
 * <p>Rules: every store this process makes into PM goes through {@code PmRegion} ({@code write},
 * {@code setLongRelease}, {@code setMutableWord}) or is reported with {@code recordWrite}, because NVM bytes and the
 * latency model count only what passes here (remote WRITEs are the fabric's to count). A {@code write} or
 * {@code setLongRelease} is durable only once {@code persist} returns, which is also what the server-flush method of
 * [persistence] ends in. A new file is sparse, so it reads as zeros, and is linked under its name only when whole;
 * memory is recycled with {@code zeroForReuse} ([recycled-memory]). File kinds are stored in headers: never renumber
 * them. {@link PowerFailure} is the power-failure emulation: in a directory with its marker every region keeps a
 * durable image ({@code DurableImage}, {@code NAME.durable}) of what it made durable, and the offline collapse keeps,
 * drops or tears at random what was written but not made durable.
 *
 * <p>Depends on the JDK ({@code java.lang.foreign}, {@code jdk.nio.mapmode}) and {@code io.erda.protocol.memory.Words}
 * only; it imports no other package of erda-core.
 */
package io.erda.core.pm;
