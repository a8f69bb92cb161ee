package io.erda.cluster;

import io.erda.cluster.client.MapLease;
import io.erda.cluster.client.ShardMap;
import io.erda.protocol.PutRequest;
import io.erda.protocol.ReplicaSender;
import io.erda.protocol.WireStatus;
import io.erda.protocol.memory.Key;
import io.erda.server.request.Replication;
import io.erda.server.store.RequestException;
import java.util.logging.Logger;

/**
 * What a member answers to each PUT ({@link ClusterServer#backupFor}): the role the shard map gives it in the key's
 * shard. It serves a role only while the map names it with the session of its own registration, the shard is not
 * lost, and its lease ({@link MemberLease}) is valid. A primary acknowledges PUTs of a shard it newly leads only once
 * clients' map leases ran out ({@link PrimaryTenure}), and hands each PUT to the shard's ordered task
 * ({@link PrimaryShard}). A backup takes a replica reservation only while its map names it the shard's backup under
 * the assignment the reservation carries, tagged with the cluster's secret ({@link ReplicaTags}), from the session
 * its map names as the shard's primary; it purges its old keys of the shard before the first of a fill
 * ({@link BackupShard}). Anything else is refused ({@link WireStatus#NOT_PRIMARY}, or
 * {@link WireStatus#NOT_AUTHORIZED} for a wrong tag).
 */
final class MemberReplication implements Replication {
    /** The member's logger: a member's lines name {@link ClusterServer} whichever of its parts logs them. */
    private static final Logger LOG = Logger.getLogger(ClusterServer.class.getName());
    /** The member, as its parts see it: read at each use ({@link MemberState}). */
    private final MemberState member;
    /** Checks the replica reservations this member receives ({@link ReplicaTags}). */
    private final ReplicaTags tags;
    private final PrimaryShard[] primaryShards;
    private final BackupShard[] backupShards;
    /** When PUTs of a shard newly led here may be acknowledged: after clients' map leases ran out ({@link MapLease}). */
    private final PrimaryTenure tenure;

    MemberReplication(MemberState member, ReplicaTags tags, PrimaryShard[] primaryShards, BackupShard[] backupShards) {
        this.member = member;
        this.tags = tags;
        this.primaryShards = primaryShards;
        this.backupShards = backupShards;
        this.tenure = new PrimaryTenure(member.id(), member.shards(), MapLease.promotionWaitNanos());
    }

    /** On a map change: the tenure of shards newly led here counts from now, not from their first PUT. */
    void mapChanged() {
        tenure.observe(member.view().map(), member.session());
    }

    @Override
    public Backup backupFor(Key key, PutRequest request) {
        int id = member.id();
        boolean replica = request.replica();
        int assignment = request.assignment();
        ShardMap map = member.view().map();
        if (map == null) {
            throw new RequestException(WireStatus.NOT_PRIMARY, "server " + id + " has no shard map yet");
        }
        int shard = map.shardOf(key.hash());
        MemberLease lease = member.lease();
        if (lease != null && !lease.valid()) {
            throw new RequestException(WireStatus.NOT_PRIMARY, "server " + id + " has not renewed its lease; it serves "
                    + "no role");
        }
        boolean named = map.names(id, member.session()) && map.state(shard) != ShardMap.State.LOST;
        if (replica) {
            if (map.backup(shard) != id || !named) {
                throw new RequestException(WireStatus.NOT_PRIMARY, "server " + id + " is not the backup of shard " + shard
                        + " in map epoch " + map.epoch());
            }
            if (map.backupSince(shard) != assignment) {
                // one of the two acts on an older map: the purge below must not run after copies it would delete
                throw new RequestException(WireStatus.NOT_PRIMARY, "server " + id + " is the backup of shard " + shard
                        + " by map epoch " + map.backupSince(shard) + ", not " + assignment + " (map epoch "
                        + map.epoch() + ")");
            }
            ReplicaSender sender = request.sender();
            if (!tags.verify(request)) {
                LOG.warning(() -> "server " + id + ": refused a replica reservation of shard " + shard + " claiming "
                        + "session 0x" + Long.toHexString(sender.session()) + ": its tag is wrong (the sender does not "
                        + "have the cluster's secret)");
                throw new RequestException(WireStatus.NOT_AUTHORIZED, "server " + id + " refuses a replica reservation"
                        + " of shard " + shard + ": its sender's tag is wrong (it does not have the cluster's secret)");
            }
            long primarySession = map.session(map.primary(shard));
            if (sender.session() != primarySession) {
                // a deposed primary acting on an older map, or a process that is no member at all
                throw new RequestException(WireStatus.NOT_PRIMARY, "server " + id + " takes replica reservations of "
                        + "shard " + shard + " only from its primary, server " + map.primary(shard) + " (session 0x"
                        + Long.toHexString(primarySession) + ", map epoch " + map.epoch() + "), not from session 0x"
                        + Long.toHexString(sender.session()));
            }
            if (map.state(shard) == ShardMap.State.FILLING) {
                backupShards[shard].purgeFor(map.session(map.primary(shard)), map.backupSince(shard));
            }
            return null;
        }
        if (map.primary(shard) != id || !named) {
            throw new RequestException(WireStatus.NOT_PRIMARY, "server " + id + " is not the primary of shard " + shard
                    + " in map epoch " + map.epoch() + " (server " + map.primary(shard) + " is, shard "
                    + map.state(shard).text() + ")");
        }
        tenure.observe(map, member.session());
        long wait = tenure.remainingNanos(shard);
        if (wait > 0) {
            // a client whose map still names the previous primary may still read there: refused, the client retries
            throw new RequestException(WireStatus.NOT_PRIMARY, "server " + id + " became primary of shard " + shard
                    + " in map epoch " + map.epoch() + "; it acknowledges PUTs once clients' map leases ("
                    + MapLease.DURATION.toMillis() + " ms) have run out, in " + (wait / 1_000_000 + 1) + " ms");
        }
        return primaryShards[shard].task();
    }
}
