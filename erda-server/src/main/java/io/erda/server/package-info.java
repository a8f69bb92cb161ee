/**
 * The Erda server: {@link io.erda.server.ErdaServerMain} (command line), {@link io.erda.server.RequestServer}
 * (fabric, connections, worker threads), {@link io.erda.server.Store} (table and logs, leases, rollback),
 * {@code Recovery} (restart), {@code StoreVerifier} and {@code TableRebuilder} (offline commands).
 *
 * <h2>What a client can rely on (the wire contract as this server implements it)</h2>
 * <ul>
 *   <li>Connect private data: {@code ConnectData}; protocol 0 is served, 1 and 2 are accepted but every request
 *       gets ERROR/UNSUPPORTED until the baselines exist; bad private data is rejected with the reason.</li>
 *   <li>The server posts {@code RECEIVE_SLOTS} (8) receive buffers of {@code StoreInfo.maxMessageLength} bytes per
 *       connection: at most 8 requests outstanding, none longer than that.</li>
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
package io.erda.server;
