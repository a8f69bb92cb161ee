/**
 * The hopscotch hash table of {@code table.pm} (paper §3.2.3), which clients read one-sided: {@link HopscotchTable}
 * (lookup, insert with displacement, atomic-word update, remove, visits; recovery on open), {@code StripeVersions} (the
 * server side of the stripe seqlock) and {@link TableFullException}. The byte ranges of buckets, windows and stripe
 * version words ({@link io.erda.protocol.memory.TableGeometry}) and a client's checks on a window it READ
 * ({@link io.erda.protocol.memory.NeighbourhoodWindow}) are the remote-memory format's, computed alike by server and
 * client.
 *
 * <p>Rules ([moves-vs-readers]): one writer, synchronized on the table; entries change by 8-byte release stores in a
 * fixed order (insert: atomic word, then meta; remove: meta first), persisted before the method returns; an entry moves
 * only through {@code move} (both stripe versions odd, copy written and persisted, original cleared, versions even); a
 * reader trusts a miss only once {@code NeighbourhoodWindow.missConfirmed} holds; {@code clearAll} (a rebuild) zeroes
 * the entries in bulk but keeps the stripe versions. {@code HopscotchTable.open} removes a duplicate left by a
 * cut-short move, evens odd versions and rebuilds the DRAM hop bitmaps ([recovery]).
 *
 * <p>Depends on {@code io.erda.core.pm}, {@code io.erda.protocol.memory} and the JDK; not on the logs (a head is only
 * an id here).
 */
package io.erda.core.table;
