/**
 * The {@code verbs://host:port} provider: RC queue pairs on an RNIC through erda-ffm-bindings.
 * {@link VerbsFabricProvider} opens a {@link VerbsFabric} (one device, one protection domain) as
 * {@link VerbsProperties} say ({@code verbs.device=soft} is the in-JVM software RNIC of the tests, found as an
 * {@link io.erda.ffm.verbs.SoftwareRnic}); {@code VerbsEndpoint}, {@code VerbsMemoryRegion} and
 * {@code VerbsCompletionQueue} (polled by its waiters, no poller thread) wrap the native objects. Connections are set
 * up over a TCP side channel ({@code VerbsListener}, {@code ConnectMessage}) or rdma_cm ({@code CmConnection},
 * {@code CmEventChannel}, {@code RdmaCmListener}, {@code CmPrivateData}); {@code RnrSetting} turns the RNR timeout into
 * verbs attributes and {@code WcStatus} translates the enums.
 *
 * <p>Rules: {@link io.erda.fabric.FabricCapabilities} come from {@code ibv_query_device(_ex)} and the loaded rdma-core,
 * and every queue is checked against them before it is created (completion queues against {@code max_cqe}, send and
 * receive depths against {@code max_qp_wr}). Where the device lacks them, ATOMIC_WRITE, CAS and FETCH_ADD are refused
 * at post time naming the missing capability, and FLUSH is a READ unless the QP has the native one. With rdma_cm
 * every event is acknowledged before its handler runs, and each id is destroyed exactly once
 * ({@code CmEventChannel.destroyId}) and before the channel. An error completion, {@code abort}, {@code close} or a
 * broken connection moves the QP to ERR, so everything outstanding flushes. Native functions are called only through
 * {@code io.erda.ffm.*}.
 *
 * <p>May depend on {@code io.erda.fabric} (the SPI),
 * {@code io.erda.ffm.verbs} and {@code io.erda.ffm.rdmacm}; never on another provider's package, nor on
 * {@code io.erda.softrnic} (test scope, found by {@code ServiceLoader}).
 */
package io.erda.fabric.verbs;
