/**
 * The fabric SPI: one verbs-shaped interface that every protocol of Erda is written against and that runs unchanged
 * on each provider (tcp, shm, verbs), chosen by URI scheme through {@link java.util.ServiceLoader}
 * ({@link FabricProvider}, {@link Fabric#open}). A {@link Fabric} registers memory ({@link MemoryRegion},
 * {@link RegisterOptions}, {@link Access}, {@link Backing}, {@link DurableMirror}), creates {@link CompletionQueue}s and
 * {@link Endpoint}s (RC
 * queue pairs: {@link WorkRequest}, {@link RecvRequest}, {@link Completion}, {@link Status}), listens
 * ({@link Listener}, {@link ConnectionRequest}) and reports {@link FabricStats} and {@link FabricCapabilities}.
 * {@link SyncEndpoint} and {@link FaultInjectingEndpoint} work on top of any provider.
 *
 * <p>The contract every provider keeps ({@code io.erda.fabric.conformance.FabricConformanceTest}, in the test jar, runs
 * against each): posted requests execute in order, and a READ, atomic or FLUSH completes only after every earlier WRITE
 * of the endpoint is placed. Execution errors come back as completions, not exceptions; the first one moves the
 * endpoint and its peer to {@link Endpoint.State#ERROR} and completes everything outstanding with
 * {@link Status#WR_FLUSH_ERROR}: nothing hangs. A one-sided access is checked (rkey, range, access flag) before memory
 * is touched and fails with {@link Status#REMOTE_ACCESS_ERROR} ([bad-input]); a misaligned atomic is refused when its
 * {@link WorkRequest} is built. Post receives before {@code connect} or {@code accept}. Limits and capabilities belong
 * to each opened fabric (verbs reads them from the device): size queues from {@link FabricCapabilities} and check a
 * capability (atomicity, ATOMIC_WRITE, native FLUSH, remote-write counting) before relying on it; what the device
 * cannot do is refused at post time, naming what is missing. A registration's write-latency model and durable mirror
 * are applied by whichever provider places a one-sided write; a kernel RNIC places writes unseen, so verbs ignores
 * the model and refuses a mirror on a real device. After {@link Fabric#close} no provider thread touches
 * registered memory.
 *
 * <p>Depends on the JDK only: the SPI names no provider and no binding, and code above it (server, client, benchmarks)
 * imports only this package, never a provider's.
 */
package io.erda.fabric;
