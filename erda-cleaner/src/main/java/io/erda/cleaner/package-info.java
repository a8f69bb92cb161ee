/**
 * The log cleaner (paper §4.4). {@link LogCleaner} compacts one head at a time while it is served (begin, merge,
 * replicate, switch, retire) and rolls a run a crash interrupted forward ({@code resume}); {@code Relocation} copies
 * live versions into the new chain and detaches entries from the old one; {@link CleaningHost} is what the cleaner
 * needs from the process serving the store; a {@link CleaningHook} is told at each {@link CleaningPoint} (crash tests
 * stop there); a run returns a {@link CleaningReport}.
 *
 * <p>Rules: every table change, and every change of the chains a head serves and writes to, happens inside
 * {@code CleaningHost.locked} (the lock the PUT path holds); {@code awaitSettled} is never called holding it
 * ([leases]). A copy is persisted before an entry points at it, and each phase change is one persisted head-record
 * store, so a run a crash cut short is finished by {@code resume} (in RETIRE, by {@code PmDirectory.open}). A version
 * that is an entry's rollback target stays until its reservation settles ({@code PENDING}, [last-complete-version]).
 * Old regions are zeroed and deleted only after a round trip and after the host has deregistered them
 * ({@code retiring}; [recycled-memory]).
 *
 * <p>Depends on erda-core, erda-protocol's remote-memory format ({@code io.erda.protocol.memory}: the objects and
 * entries it copies and detaches) and the JDK only. It never talks to clients or the fabric and imports neither
 * erda-server nor the wire messages ({@code io.erda.protocol}): telling clients and (de)registering regions go through
 * {@link CleaningHost}, which erda-server implements.
 */
package io.erda.cleaner;
