/**
 * The PM side of an Erda store. {@link PmDirectory} creates and opens a store directory ({@code table.pm},
 * {@code heads.pm}, each head's region files) with the {@link StoreGeometry} fixed at creation; {@link LogObjects}
 * addresses a store's objects the way table entries do (head and offset in 8-byte units) and never throws on garbage,
 * for the server's store, its recovery and the offline commands. The pieces live in the subpackages: {@code pm} (mapped
 * files), {@code table} (hopscotch table) and {@code log} (heads, chains, scans). The byte formats they store (object,
 * entry and slot layouts, key hashing, table and log geometry) are not erda-core's: they are the remote-memory format
 * clients share, {@code io.erda.protocol.memory} in erda-protocol.
 *
 * <p>{@code PmDirectory.open} is core's part of a restart and the same after a stop or a crash (there is no
 * clean-shutdown marker): every header is checked against the expected geometry, the table repairs itself, each head
 * gets the chains its head record names, and any other region file is zeroed and deleted (docs/ARCHITECTURE.md,
 * [recovery], [recycled-memory]).
 *
 * <p>Dependencies: inside erda-core, table uses pm; log uses pm; this package uses pm, table and log; no package
 * imports one that depends on it. Every package may use {@code io.erda.protocol.memory}. erda-core itself depends on
 * erda-protocol (for that format; hash4j comes with it) and the JDK only: no networking, fabric or wire messages
 * (docs/ARCHITECTURE.md, "Modules"); remote keys are the server's to attach, so {@link io.erda.core.log.HeadDescriptor}
 * has none.
 */
package io.erda.core;
