/**
 * The tcp provider's wire format, apart from the engine that uses it: {@link FrameHeader} (the 56-byte header in front
 * of every frame, its layout drawn in its Javadoc; a flyweight over a reusable direct buffer), {@link WireOpcode}
 * (request, response and handshake opcodes, and each one's length limits), {@link FrameChannel} (one blocking socket
 * with whole-buffer reads and writes; payloads move between the socket and registered memory without a copy) and
 * {@link ProtocolViolation}.
 *
 * <p>Rules ([bad-input]): {@link FrameHeader#readFrom} checks the magic, the opcode and every length against that
 * opcode's limit ({@link FrameHeader#MAX_PAYLOAD}, {@link FrameHeader#MAX_TEXT}, {@code Fabric.MAX_PRIVATE_DATA})
 * before a payload byte is read, and throws {@link ProtocolViolation} otherwise; the provider then closes that
 * connection. Headers are read and written only through {@link FrameHeader}'s accessors, little-endian; a new opcode
 * gets its limits in {@code WireOpcode.check}.
 *
 * <p>Depends on {@code io.erda.fabric} ({@code Fabric.MAX_PRIVATE_DATA}, {@code Opcode}) and the JDK only; never on
 * {@code io.erda.fabric.tcp}, which uses it.
 */
package io.erda.fabric.tcp.wire;
