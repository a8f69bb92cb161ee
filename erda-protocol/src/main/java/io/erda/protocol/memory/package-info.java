/**
 * The byte formats server and client share, one descriptor class each with its bit diagram: {@link ObjectLayout} (a log
 * object, CRC32C written last) with its view {@link ObjectFlyweight} and verdict {@link ObjectCheck},
 * {@link HashEntryLayout} (a 16-byte hash entry) with {@link HashEntryFlyweight}, {@link AtomicWord} (tag and the
 * offsets of the current and previous versions) and {@link LogAddress} (head and chain offset in 8-byte units).
 *
 * <p>Rules: take offsets, lengths and bit positions from the constants and helpers here, never hard-code them. Only
 * {@link ObjectCheck#VALID} is trusted: {@code validate} checks marker, lengths against the bytes available, CRC and
 * key, and never throws on garbage; the nonzero type byte keeps zeroed memory from validating ([recycled-memory]). The
 * word's second slot is what lets a reader or the server fall back from a torn object to the previous version
 * ([last-complete-version]). Offset 0 means "no version". The classes hold no state: {@code AtomicWord} computes words
 * that the table stores, and {@code encode} fills whatever segment it is given.
 *
 * <p>Depends on {@link io.erda.protocol.memory.Words} and the JDK only.
 */
package io.erda.protocol.memory;
