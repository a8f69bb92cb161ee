package io.erda.client;

import io.erda.protocol.MessageType;
import io.erda.protocol.RedoPutRequest;
import io.erda.protocol.memory.Key;
import java.lang.foreign.MemorySegment;

/**
 * The Redo Logging baseline (paper §5.1): a PUT is one SEND of key, value and CRC32C ({@link RedoPutRequest}) into
 * the server's PM redo log, acknowledged once the entry is persistent; the server applies it to the table
 * asynchronously. A DELETE is a REDO_PUT with the delete flag. GETs are two-sided ({@link BaselineClient}). Pooling,
 * threading and failures: {@link PooledClient}.
 */
public final class RedoLogClient extends BaselineClient {

    private RedoLogClient(ClientOptions options) {
        super(options);
    }

    public static RedoLogClient connect(ClientOptions options) {
        return connected(new RedoLogClient(options.withProtocol(ClientOptions.Protocol.REDO_LOG)));
    }

    @Override
    void write(ClientConnection c, Key key, MemorySegment value) {
        boolean delete = value == null;
        checkPairLimits(c, key, delete ? 0 : value.byteSize());
        c.call(MessageType.REDO_PUT, (s, o) -> RedoPutRequest.encode(s, o, key.bytes(), value, delete),
                r -> r.expect(MessageType.REDO_PUT_REPLY));
    }
}
