/**
 * The logs (paper §3.2.2): per head a {@link LogHead} owning a {@link LogChain} of region files cut into segments
 * ({@link io.erda.protocol.memory.LogGeometry}), and a second, new chain while the head is cleaned; {@link LogScanner}
 * walks a chain's objects; {@link HeadRecords} ({@code heads.pm}) keeps per head one {@link HeadRecord} word, chain
 * generation and {@link CleaningPhase}; {@link HeadDescriptor} is what a client needs to address a head (remote keys
 * aside) and {@link ChainPosition} a chain offset resolved to its region.
 *
 * <p>Rules: the first 8 bytes of a segment hold no object (chain offset 0 means none) and no object spans two segments;
 * reservations and chain changes are synchronized on the head. The tail is volatile: on open it is the last region's
 * persisted high-water mark, never the end of a scan ([recovery]). A head record changes with one persisted 8-byte
 * store, and phase codes are stored in PM. A chain the head no longer uses is zeroed up to each region's high-water
 * mark before its files are deleted or kept for reuse by {@link RegionPool} ([recycled-memory]).
 *
 * <p>Depends on {@code io.erda.core.pm}, {@code io.erda.protocol.memory} and the JDK; not on the table.
 */
package io.erda.core.log;
