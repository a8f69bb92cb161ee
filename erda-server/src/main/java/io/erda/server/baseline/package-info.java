/**
 * The two baselines of paper §5.1, hosted by the Erda server on the same store and fabric so that they compare on
 * the same machinery: Redo Logging ({@code RedoLog}: a client's SEND lands in a PM lane, is persisted and
 * acknowledged, and an applier thread writes it into the store) and Read After Write ({@code ReadAfterWriteRing}:
 * the server reserves a PM ring slot, the client WRITEs the object and READs it back to make it durable, a poller
 * applies it). Both apply through {@link io.erda.server.store.Store#apply}, so the destination's NVM bytes equal
 * Erda's, answer GET from their newest unapplied write first, and replay what is unapplied at restart ([recovery]).
 * {@link io.erda.server.baseline.Baselines} is the one door: it opens both logs and gives their two
 * {@link io.erda.server.request.Protocol}s, which the server registers beside Erda's.
 *
 * <p>May depend on erda-core, erda-protocol, the fabric SPI, {@code io.erda.server.request} (connections, requests,
 * handlers, the Erda handler's HELLO and STATS), {@code io.erda.server.store} and {@code io.erda.server.platform}
 * (public types only); only the assembly, {@code io.erda.server} ({@code RequestServer}, {@code StatsReport}),
 * depends on this package.
 */
package io.erda.server.baseline;
