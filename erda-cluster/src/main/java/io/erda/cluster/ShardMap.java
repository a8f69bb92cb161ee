package io.erda.cluster;

import io.erda.core.hash.KeyHash;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The shard map as ZooKeeper holds it at {@code /map} ([cluster]): an epoch bumped on every change, the shard count
 * (a power of two, fixed when the map is made), and per shard the primary's and the backup's server id (-1: none).
 * Text, one shard per line, so {@code zkCli get /erda/map} is readable:
 * <pre>
 * epoch 3
 * shards 4
 * 0 1 2
 * 1 2 0
 * ...
 * </pre>
 */
public record ShardMap(long epoch, int[] primaries, int[] backups) {
    public static final int NONE = -1;

    public ShardMap {
        if (primaries.length != backups.length || primaries.length == 0 || Integer.bitCount(primaries.length) != 1) {
            throw new IllegalArgumentException("shard count " + primaries.length + " is not a power of two (backups "
                    + backups.length + ")");
        }
    }

    public int shards() {
        return primaries.length;
    }

    public int shardOf(long keyHash) {
        return KeyHash.shard(keyHash, primaries.length);
    }

    public int primary(int shard) {
        return primaries[shard];
    }

    public int backup(int shard) {
        return backups[shard];
    }

    /** Every server the map names. */
    public Set<Integer> servers() {
        Set<Integer> all = new TreeSet<>();
        for (int s = 0; s < shards(); s++) {
            all.add(primaries[s]);
            if (backups[s] != NONE) {
                all.add(backups[s]);
            }
        }
        all.remove(NONE);
        return all;
    }

    /**
     * The first map over {@code servers} (at least two): shard s has primary {@code servers[s mod n]} and backup the
     * next server, so primaries and backups spread evenly and a shard's two copies are on different servers.
     */
    public static ShardMap initial(int shards, Collection<Integer> servers) {
        List<Integer> ids = new ArrayList<>(new TreeSet<>(servers));
        if (ids.size() < 2) {
            throw new IllegalArgumentException(ids.size() + " servers; a replicated map needs at least 2");
        }
        int[] p = new int[shards];
        int[] b = new int[shards];
        for (int s = 0; s < shards; s++) {
            p[s] = ids.get(s % ids.size());
            b[s] = ids.get((s + 1) % ids.size());
        }
        return new ShardMap(1, p, b);
    }

    /**
     * The map after the servers not in {@code live} are gone: a shard whose primary is gone gets its backup as
     * primary (promotion) and no backup; a shard whose backup is gone runs without one. A shard that lost both stays
     * as it is (unavailable until one returns). Returns this map if nothing changed, else one with the next epoch.
     */
    public ShardMap without(Set<Integer> live) {
        int[] p = primaries.clone();
        int[] b = backups.clone();
        for (int s = 0; s < p.length; s++) {
            if (!live.contains(p[s]) && b[s] != NONE && live.contains(b[s])) {
                p[s] = b[s];
                b[s] = NONE;
            } else if (b[s] != NONE && !live.contains(b[s])) {
                b[s] = NONE;
            }
        }
        return Arrays.equals(p, primaries) && Arrays.equals(b, backups) ? this : new ShardMap(epoch + 1, p, b);
    }

    public byte[] encode() {
        StringBuilder text = new StringBuilder("epoch " + epoch + "\nshards " + shards() + "\n");
        for (int s = 0; s < shards(); s++) {
            text.append(s).append(' ').append(primaries[s]).append(' ').append(backups[s]).append('\n');
        }
        return text.toString().getBytes(StandardCharsets.UTF_8);
    }

    public static ShardMap decode(byte[] data) {
        String[] lines = new String(data, StandardCharsets.UTF_8).split("\n");
        try {
            long epoch = Long.parseLong(field(lines, 0, "epoch"));
            int shards = Integer.parseInt(field(lines, 1, "shards"));
            if (lines.length != 2 + shards) {
                throw new IllegalArgumentException(lines.length - 2 + " shard lines for " + shards + " shards");
            }
            int[] p = new int[shards];
            int[] b = new int[shards];
            for (int s = 0; s < shards; s++) {
                String[] f = lines[2 + s].trim().split(" ");
                if (f.length != 3 || Integer.parseInt(f[0]) != s) {
                    throw new IllegalArgumentException("line '" + lines[2 + s] + "' is not 'shard primary backup' for shard " + s);
                }
                p[s] = Integer.parseInt(f[1]);
                b[s] = Integer.parseInt(f[2]);
            }
            return new ShardMap(epoch, p, b);
        } catch (NumberFormatException | ArrayIndexOutOfBoundsException e) {
            throw new IllegalArgumentException("malformed shard map: " + e.getMessage(), e);
        }
    }

    private static String field(String[] lines, int index, String name) {
        if (lines.length <= index || !lines[index].startsWith(name + " ")) {
            throw new IllegalArgumentException("shard map line " + index + " is not '" + name + " N'");
        }
        return lines[index].substring(name.length() + 1).trim();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ShardMap m && m.epoch == epoch && Arrays.equals(m.primaries, primaries)
                && Arrays.equals(m.backups, backups);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(epoch) * 31 + Arrays.hashCode(primaries);
    }

    @Override
    public String toString() {
        return "epoch " + epoch + " primaries " + Arrays.toString(primaries) + " backups " + Arrays.toString(backups);
    }
}
