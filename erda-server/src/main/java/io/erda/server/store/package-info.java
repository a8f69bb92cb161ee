/**
 * The state a server serves: {@link io.erda.server.store.Store} (the one place where table and logs change, under
 * one lock), {@code KeyEntries} (finding a key's entry), {@code Reservation}, {@code Reservations}, {@code Leases} and
 * {@link io.erda.server.store.LeaseValidator} (reservations and their settlement, [leases],
 * [last-complete-version]), {@link io.erda.server.store.Recovery} ([recovery]),
 * {@link io.erda.server.store.RegionRegistry} (what clients may reach and with which rkey),
 * {@code StoreCleaning} (the log cleaner's host) under {@link io.erda.server.store.CleaningControl} (started once,
 * as {@link io.erda.server.store.CleanThreshold} says), and {@link io.erda.server.store.StoreStats} (the counters
 * STATS reports).
 *
 * <p>{@link io.erda.server.store.RequestException} is here, not in the request path: the store is where most requests
 * are refused (key too long, value too large, log or table full), with the wire status the request path then answers.
 *
 * <p>May depend on erda-core, erda-protocol, the fabric SPI ({@code io.erda.fabric}: registrations), erda-cleaner,
 * erda-ffm-bindings' {@code io.erda.ffm.libc} (the lease checker's nice value) and {@code io.erda.server.platform};
 * never on the request path, the baselines or the command line ({@code io.erda.server}), which are built on it.
 */
package io.erda.server.store;
