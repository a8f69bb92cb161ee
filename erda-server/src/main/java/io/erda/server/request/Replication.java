package io.erda.server.request;

import io.erda.protocol.PutReply;
import io.erda.protocol.PutRequest;
import io.erda.protocol.memory.Key;
import io.erda.server.store.RequestException;

/**
 * What a clustered server does around a PUT (docs/ARCHITECTURE.md, [cluster]); {@link #NONE} for a server on its own.
 * The control plane (erda-cluster) implements it from the shard map; the server only asks it, per PUT, before it
 * reserves anything.
 */
public interface Replication {
    /** A server on its own: every PUT is served here, with no backup. */
    Replication NONE = (key, request) -> null;

    /**
     * The backup to forward {@code key}'s reservation {@code request} to, or null to serve it here alone (no backup,
     * or a {@link PutRequest#replica()} one: this is the backup, under the map assignment it names, and its sender
     * must be the shard's primary). Throws a {@link RequestException} with
     * {@link io.erda.protocol.WireStatus#NOT_PRIMARY} when this server is not the key's primary (or, for a replica
     * reservation, not its backup under that assignment, or the sender is not the shard's primary).
     */
    Backup backupFor(Key key, PutRequest request);

    /** A shard's backup, as the primary sees it. */
    interface Backup {
        /** The backup server's id, which the client finds in the shard map. */
        int server();

        /**
         * Runs the primary's local reservation and then the backup's, one task after another (one executor per
         * shard), so both servers see a key's PUTs in one order. Off the request threads: two primaries that back each
         * other up would otherwise deadlock once every worker of each waits for the other.
         */
        java.util.concurrent.Executor ordered();

        /**
         * In the ordered task, before anything is reserved here: readies the backup for {@code request}'s key, or
         * refuses with a {@link RequestException} ({@link io.erda.protocol.WireStatus#BACKUP_UNAVAILABLE}, the client
         * tries again) so that a PUT the backup cannot take yet leaves no reservation behind on either server. A
         * backup being filled gets the key's older value here first ([cluster]).
         */
        default void prepare(PutRequest request) {
        }

        /**
         * Reserves the same object on the backup (a replica reservation; of {@code request} only the key, the value length
         * and delete count: the cluster adds the backup's assignment); null for a DELETE of a key the backup does
         * not have. Throws a {@link RequestException} with {@link io.erda.protocol.WireStatus#BACKUP_UNAVAILABLE}
         * when the backup cannot be reached.
         */
        PutReply reserve(PutRequest request);
    }
}
