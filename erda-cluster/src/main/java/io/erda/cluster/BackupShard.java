package io.erda.cluster;

import io.erda.cluster.client.ShardMap;
import java.util.List;
import java.util.logging.Logger;

/**
 * A shard as its backup sees it: a server made the filling backup of a shard first deletes every key of the
 * shard it holds (a returning server's old files: keys deleted or changed since it left must not come back if it is
 * promoted), before it accepts the first replica reservation of that fill: once per primary's session, so a
 * server filled again by a primary that returned (a lost shard re-adopted, [cluster]) starts clean again. This is
 * the only place a server deletes keys for the cluster, and a lost shard has no backup: its last primary's keys of
 * it stay until the shard is re-adopted. The purge runs as soon as the member learns of the fill
 * ({@link #purgeForNewFills}), and at the latest on the fill's first replica reservation
 * ({@link MemberReplication#backupFor}).
 */
final class BackupShard {
    /** The member's logger: a member's lines name {@link ClusterServer} whichever of its parts logs them. */
    private static final Logger LOG = Logger.getLogger(ClusterServer.class.getName());
    private final int shard;
    /** The member, as its parts see it: read at each use ({@link MemberState}). */
    private final MemberState member;
    /**
     * The fill this server last purged for: its primary's session (sessions are unique; 0: none) and the map epoch
     * that assigned this server ({@link ShardMap#backupSince}), so a server dropped as the backup and given the role
     * again (rebalancing, or its successor died) purges again, even for the same primary.
     */
    private long purgedFor;
    private long purgedAssignment;

    BackupShard(int shard, MemberState member) {
        this.shard = shard;
        this.member = member;
    }

    synchronized boolean purgedFor(long primarySession, long assignment) {
        return purgedFor == primarySession && purgedAssignment == assignment;
    }

    /**
     * Purges for the fill of {@code assignment} by {@code primarySession}, once. Never for an assignment older than the
     * last one purged for (assignments are map epochs, which only grow): a background purge that ran late would delete
     * what a newer fill already copied here.
     */
    synchronized void purgeFor(long primarySession, long assignment) {
        if (assignment < purgedAssignment || purgedFor == primarySession && purgedAssignment == assignment) {
            return;
        }
        int shards = member.shards();
        io.erda.server.store.Store store = member.server().store();
        List<byte[]> stale = store.keys(hash -> io.erda.protocol.memory.KeyHash.shard(hash, shards) == shard);
        for (byte[] key : stale) {
            store.apply(java.lang.foreign.MemorySegment.ofArray(key), java.lang.foreign.MemorySegment.NULL, true);
        }
        purgedFor = primarySession;
        purgedAssignment = assignment;
        if (!stale.isEmpty()) {
            LOG.info(() -> "server " + member.id() + ": deleted " + stale.size() + " old keys of shard " + shard
                    + " before being filled as its backup");
        }
    }

    /** {@link #purgeFor}, if the map still makes this server the shard's filling backup of that fill. */
    private synchronized void purgeIfStillFilling(long primarySession, long assignment) {
        ShardMap map = member.view().map();
        if (map != null && map.backup(shard) == member.id() && map.state(shard) == ShardMap.State.FILLING
                && map.session(map.primary(shard)) == primarySession && map.backupSince(shard) == assignment) {
            purgeFor(primarySession, assignment);
        }
    }

    /**
     * On a map change: a shard this server was just made the filling backup of is purged now, in the background,
     * rather than when its primary's first replica reservation arrives; the primary, promoted by the same map, is still
     * waiting out its tenure then, and a purge scans the whole table. {@link MemberReplication#backupFor} purges too (a
     * no-op once done).
     */
    static void purgeForNewFills(BackupShard[] backupShards, MemberState member) {
        ShardMap map = member.view().map();
        if (map == null || member.server() == null || !map.names(member.id(), member.session())) {
            return;
        }
        for (int s = 0; s < map.shards(); s++) {
            if (map.backup(s) == member.id() && map.state(s) == ShardMap.State.FILLING) {
                BackupShard shard = backupShards[s];
                long primarySession = map.session(map.primary(s));
                long assignment = map.backupSince(s);
                if (!shard.purgedFor(primarySession, assignment)) {
                    Thread.ofVirtual().name("erda-purge-" + s).start(() -> shard.purgeIfStillFilling(primarySession,
                            assignment));
                }
            }
        }
    }
}
