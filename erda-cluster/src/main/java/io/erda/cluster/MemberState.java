package io.erda.cluster;

import io.erda.cluster.client.ClusterView;
import io.erda.server.RequestServer;
import org.apache.curator.framework.CuratorFramework;

/**
 * What a member's parts ({@link MemberReplication}, {@link PrimaryShard}, {@link BackupFill}, {@link BackupShard},
 * {@link Peers}) read of the member itself ({@link ClusterServer}). Most of it is set only as the member starts (its
 * ZooKeeper client, view, server and lease), registers (its session) and closes, after those parts were made: so
 * they ask here at each use and never keep a copy.
 */
interface MemberState {
    /** This member's server id. */
    int id();

    /** The member's shard count (the length of its per-shard arrays). */
    int shards();

    /**
     * The session of this member's registration (0 before it registers): the map must name it with this one for it
     * to serve a role.
     */
    long session();

    /** The member's lease; null until it registered. */
    MemberLease lease();

    /** Whether the member is closing. */
    boolean closed();

    /** The member's view of the map and the registrations; null before it starts. */
    ClusterView view();

    /** The member's server and store; null before it starts. */
    RequestServer server();

    /** The member's ZooKeeper client; null before it starts. */
    CuratorFramework zk();
}
