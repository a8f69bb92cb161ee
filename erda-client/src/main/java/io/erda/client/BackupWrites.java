package io.erda.client;

import io.erda.protocol.PutReply;
import java.lang.foreign.MemorySegment;

/**
 * Where a replicated PUT's second WRITE goes (docs/ARCHITECTURE.md, [cluster]): a clustered primary's PUT_REPLY
 * names the shard's backup server and the reservation it made there; the cluster client WRITEs the same object there
 * ({@link ErdaClient#writeReserved}) and applies that server's persistence method before the PUT returns.
 */
@FunctionalInterface
public interface BackupWrites {
    /** A client that talks to one server: a reply naming a backup is refused (it needs a {@code zk://} client). */
    BackupWrites NONE = (server, reservation, object) -> {
        throw new ErdaException(io.erda.protocol.WireStatus.UNSUPPORTED, "the server replicates this key to backup "
                + "server " + server + ": connect through the cluster's zk:// URI, not to one server");
    };

    /** WRITEs {@code object} (encoded, padded) to {@code reservation} on server {@code server}; durable on return. */
    void write(int server, PutReply reservation, MemorySegment object);
}
