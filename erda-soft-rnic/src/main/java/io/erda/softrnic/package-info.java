/**
 * The in-JVM software RNIC: a fake libibverbs and librdmacm built from FFM upcall stubs, so that the verbs
 * bindings and the {@code verbs://} provider run in ordinary tests on a host without an RDMA device.
 * {@link io.erda.softrnic.SoftRnic} is an RDMA network inside the JVM and {@link io.erda.softrnic.SoftRnicDevice}
 * one port on it: a {@code struct ibv_context} and a symbol lookup whose functions execute the work requests they
 * decode ({@code SoftQueuePair}), with rdma_cm emulated by {@code SoftRdmaCm}.
 * {@link io.erda.softrnic.FakeVerbsDevice} only records what it is given, for tests of the typed bindings.
 *
 * <p>For tests only: modules depend on erda-soft-rnic in test scope, and the verbs provider finds it through
 * {@link io.erda.ffm.verbs.SoftwareRnic} ({@link io.erda.softrnic.SharedSoftRnic}, registered for ServiceLoader),
 * so no production jar contains or compiles against this package. It may depend on erda-ffm-bindings (the structs,
 * descriptors and constants of {@code io.erda.ffm.verbs} and {@code io.erda.ffm.rdmacm}) and the JDK, nothing
 * else: the fabric and everything above it are what it tests.
 */
package io.erda.softrnic;
