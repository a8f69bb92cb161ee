/**
 * librdmacm, bound as far as the verbs provider's {@code verbs.cm=rdmacm} needs it: {@link RdmaCmLibrary} (event
 * channel, ids, address and route resolution, listen, connect, accept, reject, disconnect, {@code rdma_init_qp_attr}
 * onto a QP of the application's, {@code rdma_get_devices}), {@link CmEvent} (an event decoded, its private data
 * copied) and {@link RdmaCma} (the layouts and constants of {@code rdma_cma.h}, generated and checked like
 * {@code io.erda.ffm.verbs.Verbs}: never edit it).
 *
 * <p>Rules librdmacm sets and callers keep (these bindings do not enforce them; the verbs provider's
 * {@code CmEventChannel} does): acknowledge every event with {@code ackEvent}, after which its segment is gone; destroy
 * each id exactly once, after its delivered events were acknowledged ({@code rdma_destroy_id} waits for them) and
 * before the event channel it was created on; read events on a platform thread ({@code rdma_get_cm_event} blocks in
 * native code; {@code awaitEvent} polls the channel's fd with a timeout so a reader can stop). IPv4 only.
 *
 * <p>Depends on {@code io.erda.ffm.verbs} ({@code NativeLibrary} for linking and errors, the {@code Verbs} layouts,
 * {@code QueuePair}) and the JDK; never on {@code io.erda.fabric} or anything above.
 */
package io.erda.ffm.rdmacm;
