package io.erda.cluster;

import io.erda.cluster.client.ShardMap;
import io.erda.protocol.PutReply;
import io.erda.protocol.PutRequest;
import io.erda.protocol.WireStatus;
import io.erda.server.request.Replication;
import io.erda.server.store.RequestException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A shard as its primary sees it. Every PUT of the shard here, replicated or not, is a task of the shard's
 * single-thread executor (so both copies see a key's PUTs in one order, and a change of backup falls between two
 * PUTs); {@link #sync} brings the state in line with the map at the start of each task. The thread is a platform
 * thread: it waits for the backup's reply the way every fabric waiter does, and a virtual thread's yield would not
 * give up the core that reply needs.
 *
 * <p><b>Filling a new backup</b> ([cluster]). From the task that first sees the shard's backup {@code FILLING}
 * (time T), every reservation is forwarded to it. Before a key's first reservation is forwarded, the key's newest
 * complete value is copied to the backup (reserved and written by this server, synchronously, in the same task),
 * so the backup's entry holds the key's older version under the forwarded one and a client that dies between its
 * two WRITEs rolls both copies back alike. Meanwhile a fill thread waits a lease past T (every reservation made
 * before T is then written or past its deadline), lists the shard's keys and, in tasks of a few keys each, copies
 * every key not yet copied or forwarded; a key touched since T is never copied again, so a copy never lands over a
 * forwarded version. A key's copy also waits until its reservations from before T are complete or settled
 * ({@link io.erda.server.store.Store#settledBefore}); a PUT that would copy such a key first is refused meanwhile (its
 * client tries again), so one key does not hold up the shard's other PUTs. Then it marks the backup full in the map
 * (compare-and-set). The fill is a {@link BackupFill}.
 */
final class PrimaryShard {
    final int shard;
    final java.util.concurrent.Executor ordered;
    /** The member, as its parts see it: read at each use ({@link MemberState}). */
    final MemberState member;
    /** Connections to the backups. */
    final Peers peers;
    /** Signs the replica reservations forwarded to the backup ({@link ReplicaTags}). */
    private final ReplicaTags tags;
    private final ExecutorService thread;
    // fields below: written only in the shard's tasks
    int backup = ShardMap.NONE;
    long backupSession;
    /** The map epoch that assigned the backup ({@link ShardMap#backupSince}): a new assignment is a new fill. */
    long backupSince;
    /** The map says the shard is lost: no PUT of it is acknowledged here, whatever the map said when it was queued. */
    boolean lost;
    /** The fill under way, or null; volatile so a fill thread can see it was superseded between tasks. */
    volatile BackupFill fill;

    PrimaryShard(int shard, MemberState member, Peers peers, ReplicaTags tags) {
        this.shard = shard;
        this.member = member;
        this.peers = peers;
        this.tags = tags;
        this.thread = Executors.newSingleThreadExecutor(Thread.ofPlatform().daemon().name("erda-shard-" + shard).factory());
        this.ordered = task -> thread.execute(() -> {
            sync();
            task.run();
        });
    }

    /** One PUT of this shard (the member is its primary): its {@link ShardTask}. */
    Replication.Backup task() {
        return new ShardTask(this);
    }

    /** On a map change: an empty task, so that {@link #sync} starts or stops a fill as the map now says. */
    void resync() {
        ordered.execute(() -> { });
    }

    /** Stops the shard's thread (the member is closing). */
    void close() {
        thread.shutdownNow();
    }

    /**
     * In a task: follows the map's backup for this shard; starts a fill when it names a new filling backup. A map
     * that names this id under another session speaks of an earlier incarnation and is ignored; a lost shard has
     * no backup here, so the filling backup the shard gets once it is re-adopted is a new one even if it is the
     * same server (with the same session) as before the shard was lost.
     */
    void sync() {
        ShardMap map = member.view().map();
        int id = member.id();
        if (map == null || map.primary(shard) != id || !map.names(id, member.session())) {
            return;
        }
        lost = map.state(shard) == ShardMap.State.LOST;
        if (lost) {
            backup = ShardMap.NONE;
            backupSession = 0;
            fill = null;
            return;
        }
        int b = map.backup(shard);
        long bSession = b == ShardMap.NONE ? 0 : map.session(b);
        long since = map.backupSince(shard);
        if (b != backup || bSession != backupSession || since != backupSince) {
            backup = b;
            backupSession = bSession;
            backupSince = since;
            fill = null;
            if (b != ShardMap.NONE && map.state(shard) == ShardMap.State.FILLING) {
                fill = new BackupFill(this, b, bSession, since, System.nanoTime());
                Thread.ofVirtual().name("erda-fill-" + shard).start(fill::run);
            }
        } else if (fill != null && map.state(shard) == ShardMap.State.FULL) {
            fill = null;
        }
    }

    /**
     * In a task, before the PUT reserves anything here: a backup being filled gets the key's older value first
     * ({@link BackupFill#copyFirst}); refused while that value is not yet known.
     */
    void prepare(java.lang.foreign.MemorySegment key) {
        if (lost) {
            throw new RequestException(WireStatus.NOT_PRIMARY, "shard " + shard + " is lost");
        }
        BackupFill f = fill;
        if (backup == ShardMap.NONE || f == null) {
            return;
        }
        try {
            f.copyFirst(key);
        } catch (RequestException refused) {
            throw refused;
        } catch (RuntimeException e) {
            throw backupFailed(e);
        }
    }

    /** In a task: the backup's reservation for a PUT already reserved here, or null when the shard has no backup. */
    PutReply forward(PutRequest request) {
        if (lost) {
            throw new RequestException(WireStatus.NOT_PRIMARY, "shard " + shard + " is lost");
        }
        if (backup == ShardMap.NONE) {
            return null;
        }
        try {
            return reserveReplica(peers.peer(backup), request.key(), request.valueLength(), request.delete(), backupSince);
        } catch (RuntimeException e) {
            throw backupFailed(e);
        }
    }

    /**
     * A replica reservation on {@code to} under the map assignment {@code assignment}, signed as this member's
     * ({@link ReplicaTags}): a forwarded PUT's and a fill's copy alike.
     */
    io.erda.protocol.PutReply reserveReplica(io.erda.client.ErdaClient to, java.lang.foreign.MemorySegment key,
                                             int valueLength, boolean delete, long assignment) {
        int a = Math.toIntExact(assignment);
        return to.reserveReplica(key, valueLength, delete, a, tags.sign(member.session(), key, valueLength, delete, a));
    }

    private RequestException backupFailed(RuntimeException e) {
        peers.failed(backup, e);
        return new RequestException(WireStatus.BACKUP_UNAVAILABLE, "shard " + shard + ": backup server " + backup
                + " did not reserve: " + e.getMessage());
    }

    /** Sends {@code ordered} a task and waits for it. */
    void inTask(Runnable task) throws Exception {
        java.util.concurrent.CompletableFuture<Void> done = new java.util.concurrent.CompletableFuture<>();
        ordered.execute(() -> {
            try {
                task.run();
                done.complete(null);
            } catch (Throwable t) {
                done.completeExceptionally(t);
            }
        });
        done.get();
    }

    /**
     * One PUT's side of {@link PrimaryShard}: which backup (if any) its reservation went to is decided in the shard's
     * ordered task, from the shard's state then, so a backup assigned or dropped meanwhile is seen in order.
     */
    private static final class ShardTask implements Replication.Backup {
        private final PrimaryShard shard;
        private int server = ShardMap.NONE;

        ShardTask(PrimaryShard shard) {
            this.shard = shard;
        }

        @Override
        public int server() {
            return server;
        }

        @Override
        public java.util.concurrent.Executor ordered() {
            return shard.ordered;
        }

        @Override
        public void prepare(PutRequest request) {
            shard.prepare(request.key());
        }

        @Override
        public PutReply reserve(PutRequest request) {
            server = shard.backup;
            return shard.forward(request);
        }
    }
}
