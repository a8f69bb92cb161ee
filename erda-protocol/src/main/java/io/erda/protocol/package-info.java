/**
 * The client/server wire format of Erda and its two baselines, and the contract behind it. Both sides link this
 * module; this package depends on the JDK only, so neither side's internals (the store, fabric providers) leak into
 * it. The other half of what both sides must agree on, the bytes clients READ and WRITE one-sided (object, entry and
 * slot layouts, key hashing, table and log geometry), is {@link io.erda.protocol.memory}, in this module too.
 *
 * <h2>Framing</h2>
 * Every two-sided message is one SEND: a 16-byte {@link io.erda.protocol.MessageHeader} (magic {@code 0xE7DA},
 * version, {@link io.erda.protocol.MessageType}, request id, {@link io.erda.protocol.WireStatus}, flags, body
 * length), then the body. Requests have odd type codes and their replies the next even code; ERROR answers any
 * request; HEAD_STATE is unsolicited. Each body is a record here with its byte layout in its Javadoc, an
 * {@code encode(MemorySegment, long)} that fits {@link io.erda.protocol.BodyEncoder} (the one shape in which client
 * and server hand a body to their framing code) and a {@code decode} that checks every length against the bytes
 * received and throws {@link io.erda.protocol.WireFormatException} naming the field, the value and the limit.
 * Connect private data is {@link io.erda.protocol.ConnectData}.
 *
 * <h2>What a client can rely on (the contract erda-server implements)</h2>
 * <ul>
 *   <li>Connect private data: {@code ConnectData}; protocols 0 (Erda), 1 (Redo Logging) and 2 (Read After Write)
 *       are all served, the protocol fixed per connection; bad private data is rejected with the reason. A request
 *       of another protocol gets ERROR/UNSUPPORTED naming the connection's protocol. HELLO_REPLY's {@code protocol},
 *       {@code maxMessageLength} and {@code maxValueLength} (for a 1-byte key; a longer key takes its extra bytes
 *       off it) are the connection's protocol's.</li>
 *   <li>The server posts {@code RECEIVE_SLOTS} (8) receive buffers of {@code StoreInfo.maxMessageLength} bytes per
 *       Erda and Read After Write connection; a Redo Logging connection gets a lane of 16 buffers of 128 KiB of
 *       the PM redo log, and a buffer is posted again only once its entry has been applied (a client that outruns
 *       the applier meets RNR: wait for it).</li>
 *   <li>Redo Logging: REDO_PUT ({@code RedoPutRequest}: key, value, CRC32C) gets an empty REDO_PUT_REPLY once the
 *       entry is persistent in PM; a bad CRC gets BAD_REQUEST naming both values. Read After Write: RAW_RESERVE (a
 *       {@code PutRequest} body) gets {@code RawReserveReply}; the client WRITEs the slot
 *       ({@link io.erda.protocol.memory.RingSlotLayout}: the reply's position and a CRC in front of the
 *       {@code ObjectLayout} object) and READs (FLUSH) it back, which makes it durable, within the lease. On both,
 *       GET answers from the newest unapplied write of the key, else from the table. Unapplied writes are replayed at
 *       restart.</li>
 *   <li>Replies are SENDs; a client's receive buffers must hold the largest reply it can provoke: HELLO_REPLY
 *       ({@code StoreInfo.encodedLength()}), GET_REPLY (16 + 8 + value length, up to
 *       {@code StoreInfo.maxValueLength}).</li>
 *   <li>Any refused request gets type ERROR with a status and an {@code ErrorReply} message naming value and limit
 *       (KEY_TOO_LONG, VALUE_TOO_LARGE, TABLE_FULL, LOG_FULL, UNKNOWN_ADDRESS, BAD_REQUEST, UNSUPPORTED, INTERNAL,
 *       and NOT_FOUND for a DELETE of a key that has no entry). A two-sided GET of a missing or deleted key is
 *       GET_REPLY with status NOT_FOUND and an empty body. A message without a usable header (shorter than 16
 *       bytes, wrong magic or version) aborts the connection.</li>
 *   <li>PUT_REPLY's lease counts from when the server reserved; a client should count it from when it sent the
 *       PUT (earlier), so it never believes it has more time than the server gives it.</li>
 *   <li>REPAIR_HINT's body is a {@code KeyRequest}; the reply is {@code RepairHintReply}.</li>
 *   <li>HELLO_REPLY's table descriptor covers the bucket array, the stripe descriptor the stripe version words;
 *       both have the same rkey, so {@code table.address + TableGeometry.windowVersionsOffset(home)} works too.
 *       {@code tableBuckets} includes the H-1 overflow buckets (capacity = tableBuckets - H + 1).</li>
 *   <li>The head array's regions are each region file's data area (chain offsets {@code [i*regionSize,
 *       (i+1)*regionSize)}); a head's generation grows when its chain gains a region (HEADS refreshes it).</li>
 * </ul>
 */
package io.erda.protocol;
