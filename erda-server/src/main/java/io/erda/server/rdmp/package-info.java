/**
 * RDMP-KV's protocols (Li, Shankar, Gugnani, Lu: <em>RDMP-KV: Designing Remote Direct Memory Persistence based
 * Key-Value Stores with PMEM</em>) as contenders beside Erda and the baselines: RDMA-HERD (the value in the request,
 * staged into PM by the server), RDMP-SA (a server-reply metadata phase, the client's WRITE, a server flush that sets
 * the two flags) and RDMP-CC (the same metadata phase, then a one-sided WRITE, flush and flags). All three keep their
 * objects in one PM pool ({@code RdmpPool}) with the two-flag consistency scheme and its recovery.
 * {@link io.erda.server.rdmp.Rdmp} is the one door: it opens the pool and gives the three
 * {@link io.erda.server.request.Protocol}s the server registers.
 *
 * <p>May depend on erda-core, erda-protocol, the fabric SPI, {@code io.erda.server.request} (protocols, requests,
 * the Erda handler's HELLO and STATS), {@code io.erda.server.store} ({@code RequestException}) and
 * {@code io.erda.server.platform}; only the assembly, {@code io.erda.server}, depends on this package.
 */
package io.erda.server.rdmp;
