package io.erda.cluster;

import io.erda.client.ErdaClient;
import io.erda.cluster.client.ShardMap;
import io.erda.cluster.client.Zk;
import io.erda.protocol.WireStatus;
import io.erda.server.store.RequestException;
import java.util.List;
import java.util.Set;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * One fill of one backup of one shard ({@link PrimaryShard}, which starts it when its map first names a new
 * {@code FILLING} backup, at T): before a key's first reservation is forwarded, its older value is copied
 * ({@link #copyFirst}); the fill thread ({@link #run}) waits a lease past T, copies every key of the shard not copied
 * or forwarded since T, and marks the backup full in the map (compare-and-set). It ends when done, superseded (the
 * map moved on: another backup, or none) or the member closes.
 */
final class BackupFill {
    /** The member's logger: a member's lines name {@link ClusterServer} whichever of its parts logs them. */
    private static final Logger LOG = Logger.getLogger(ClusterServer.class.getName());
    /** Few: a PUT of the shard queued behind a task of copies waits for all of them, within its lease. */
    private static final int KEYS_PER_TASK = 4;
    private static final long FIRST_BACKOFF_MILLIS = 100;
    private static final long MAX_BACKOFF_MILLIS = 5000;
    private final PrimaryShard shard;
    private final MemberState member;
    private final int backup;
    private final long backupSession;
    private final long backupSince;
    private final long startNanos;
    /** Keys copied or forwarded since the fill began; only in the shard's tasks. */
    private final Set<KeyBytes> touched = new java.util.HashSet<>();
    private long copied;

    BackupFill(PrimaryShard shard, int backup, long backupSession, long backupSince, long startNanos) {
        this.shard = shard;
        this.member = shard.member;
        this.backup = backup;
        this.backupSession = backupSession;
        this.backupSince = backupSince;
        this.startNanos = startNanos;
    }

    /** A key's bytes as a set element (arrays are equal only to themselves). */
    private record KeyBytes(byte[] bytes) {
        @Override
        public boolean equals(Object o) {
            return o instanceof KeyBytes k && java.util.Arrays.equals(k.bytes, bytes);
        }

        @Override
        public int hashCode() {
            return java.util.Arrays.hashCode(bytes);
        }
    }

    private boolean current() {
        return shard.fill == this;
    }

    private io.erda.server.store.Store store() {
        return member.server().store();
    }

    /**
     * In a task: before {@code key}'s first forwarded reservation, its older value goes to the backup. While a
     * reservation of the key from before the fill is open (a PUT through the previous primary, when this server was
     * just promoted, may still complete it within its lease) that value is not known yet: the PUT is refused and
     * its client tries again, instead of holding up the shard's task, and with it every other key's PUT of the
     * shard, for up to a lease.
     */
    void copyFirst(java.lang.foreign.MemorySegment key) {
        byte[] bytes = key.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
        if (touched.contains(new KeyBytes(bytes))) {
            return;
        }
        if (!store().settledBefore(key, startNanos) && System.nanoTime() < giveUpNanos()) {
            throw new RequestException(WireStatus.BACKUP_UNAVAILABLE, "shard " + shard.shard + ": the key's "
                    + "reservation from before backup " + backup + " began to be filled is still open (a lease is "
                    + store().leaseNanos() / 1_000_000 + " ms); its older value is copied once it settles");
        }
        copy(bytes);
    }

    /** Past this, a key's copy waits no more for its reservations from before the fill (a guard: they settle first). */
    private long giveUpNanos() {
        return startNanos + 3 * store().leaseNanos();
    }

    /** In a task: copies {@code key}'s newest complete value (if it has one) to the backup, synchronously. */
    private void copy(byte[] key) {
        java.lang.foreign.MemorySegment k = java.lang.foreign.MemorySegment.ofArray(key);
        while (!store().settledBefore(k, startNanos) && System.nanoTime() < giveUpNanos()) {
            java.util.concurrent.locks.LockSupport.parkNanos(200_000);
        }
        byte[] value = store().get(k);
        if (value != null) {
            java.lang.foreign.MemorySegment v = java.lang.foreign.MemorySegment.ofArray(value);
            java.lang.foreign.MemorySegment object = java.lang.foreign.MemorySegment.ofArray(
                    new byte[(int) io.erda.protocol.memory.ObjectLayout.align(io.erda.protocol.memory.ObjectLayout.HEADER_LENGTH
                            + key.length + value.length)]);
            io.erda.protocol.memory.ObjectLayout.encode(object, 0, k, v, false);
            ErdaClient to = shard.peers.peer(backup);
            to.writeReserved(shard.reserveReplica(to, k, value.length, false, backupSince), object);
            copied++;
        }
        touched.add(new KeyBytes(key));
    }

    /**
     * The fill thread: waits out reservations from before the fill, copies the rest, marks the backup full. Any
     * failure (a copy, listing the keys, ZooKeeper while marking full, anything unexpected) is logged and the fill
     * tried again after a pause that doubles up to {@value #MAX_BACKOFF_MILLIS} ms, until it is done, superseded
     * (the map moved on: another backup, or none) or the server closes. Keys already copied or forwarded are not
     * copied again.
     */
    void run() {
        long backoff = FIRST_BACKOFF_MILLIS;
        for (int attempt = 1; ; attempt++) {
            if (!current() || member.closed()) {
                return;
            }
            long pause;
            try {
                if (fillOnce()) {
                    return;
                }
                pause = FIRST_BACKOFF_MILLIS; // a copy failed: the map may be moving; tried again shortly
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (Exception e) {
                if (!current() || member.closed()) {
                    return;
                }
                pause = backoff;
                int n = attempt;
                long ms = pause;
                LOG.log(Level.WARNING, e, () -> "server " + member.id() + ": fill of shard " + shard.shard
                        + " to server " + backup + " failed (attempt " + n + "); trying again in " + ms + " ms");
                backoff = Math.min(MAX_BACKOFF_MILLIS, backoff * 2);
            }
            try {
                Thread.sleep(pause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /**
     * One attempt: true when done (marked full, or superseded), false when a copy failed (the backup's view may lag
     * the map, or it died, and then the map moves on); throws on any other failure.
     */
    private boolean fillOnce() throws Exception {
        long wait = startNanos + store().leaseNanos() * 5 / 4 + 50_000_000L - System.nanoTime();
        if (wait > 0) {
            Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
        }
        int shards = member.shards();
        List<byte[]> keys = store().keys(hash -> io.erda.protocol.memory.KeyHash.shard(hash, shards) == shard.shard);
        LOG.info(() -> "server " + member.id() + ": filling backup " + backup + " of shard " + shard.shard
                + " with up to " + keys.size() + " keys");
        for (int from = 0; from < keys.size(); from += KEYS_PER_TASK) {
            int start = from;
            int end = Math.min(keys.size(), from + KEYS_PER_TASK);
            boolean[] superseded = {false};
            try {
                shard.inTask(() -> {
                    if (!current()) {
                        superseded[0] = true;
                        return;
                    }
                    for (int i = start; i < end; i++) {
                        if (!touched.contains(new KeyBytes(keys.get(i)))) {
                            copy(keys.get(i));
                        }
                    }
                });
            } catch (java.util.concurrent.ExecutionException e) {
                LOG.log(Level.FINE, "fill of shard " + shard.shard + ": copy failed, retrying", e.getCause());
                shard.peers.failed(backup, e.getCause());
                return false;
            }
            if (superseded[0]) {
                return true;
            }
        }
        markFull();
        return true;
    }

    private void markFull() throws Exception {
        CuratorFramework zk = member.zk();
        int id = member.id();
        while (true) {
            Stat stat = new Stat();
            ShardMap map = ShardMap.decode(zk.getData().storingStatIn(stat).forPath(Zk.MAP));
            int s = shard.shard;
            if (map.primary(s) != id || map.backup(s) != backup || map.session(backup) != backupSession
                    || map.backupSince(s) != backupSince || map.state(s) != ShardMap.State.FILLING) {
                return; // the map moved on (the backup died, or this server is no longer named)
            }
            try {
                zk.setData().withVersion(stat.getVersion()).forPath(Zk.MAP, map.withFull(s).encode());
                long n = copied;
                LOG.info(() -> "server " + id + ": backup " + backup + " of shard " + s + " is full (" + n
                        + " keys copied)");
                return;
            } catch (KeeperException.BadVersionException raced) {
                // read again
            }
        }
    }
}
