/**
 * The {@code tcp://host:port} provider: a software RNIC over TCP sockets, so that Erda's one-sided protocol runs
 * between hosts without RDMA hardware. {@link TcpFabricProvider} opens a {@code TcpFabric}. A connection
 * ({@code TcpEndpoint}) is two sockets, one per direction of requests: this side's posting thread writes its requests
 * in order and a completer thread turns the responses into completions, while the connection's {@code Responder}
 * thread, the NIC engine, executes the peer's requests against registered memory ({@code TcpRegion}); application
 * threads see only SEND and WRITE_WITH_IMM, as receive completions; a receive that finds every waiter of its queue
 * parked may be handed to the queue's idle consumer on the responder thread itself (direct delivery,
 * {@code EmulatedCompletionQueue.deliver}), saving the waiter's wake-up. {@code TcpListener} and
 * {@code TcpConnectionRequest} set connections up (CONNECT and ATTACH meet by nonce). Frames are
 * {@code io.erda.fabric.tcp.wire}'s.
 *
 * <p>Rules: every one-sided access passes {@code RegionTable.check} (rkey, range, access flag, alignment) before the
 * responder touches memory; a refused one is answered with its status, its payload is read and dropped, and both
 * endpoints go to ERROR ([bad-input]). A frame the wire rules reject is a {@code ProtocolViolation} that closes that
 * connection only. One responder per connection keeps RC ordering: a READ, atomic or FLUSH is answered only after
 * every earlier WRITE was placed (and the write-latency model applied). Only engine threads touch memory for a peer;
 * their CPU time is the fabric's engine CPU, and {@code close} waits for them so the caller may free registered memory.
 * Nothing waits on the network without a bound ({@code TcpSettings}): {@code connect} gives up after the connect
 * timeout, and an established connection that receives nothing, not even the peer's HEARTBEAT frames, for the peer
 * timeout goes to ERROR (the reasoning, and why not TCP keepalive, is {@code TcpEndpoint}'s Javadoc).
 *
 * <p>May depend on {@code io.erda.fabric} (the SPI), {@code io.erda.fabric.emulated} and {@code io.erda.fabric.tcp.wire};
 * never on another provider's package or on the bindings.
 */
package io.erda.fabric.tcp;
