package io.erda.cluster;

import io.erda.core.hash.KeyHash;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The shard map as ZooKeeper holds it at {@code /map} ([cluster]): an epoch bumped on every change, the shard count
 * (a power of two, fixed when the map is made), per shard the primary's and the backup's server id (-1: none) and the
 * shard's {@link State}, and the ZooKeeper session each named server was registered under. A server id whose live
 * registration has another session is a new incarnation of it (a restart), which holds none of the shard's
 * acknowledged data the map counts on: the map drops it as if it had left. Text, so {@code zkCli get /erda/map} is
 * readable:
 * <pre>
 * epoch 3
 * shards 4
 * 0 1 2 full
 * 1 2 3 filling
 * ...
 * sessions 1:72057594037927936 2:... 3:...
 * </pre>
 */
public record ShardMap(long epoch, int[] primaries, int[] backups, State[] states, SortedMap<Integer, Long> sessions) {
    public static final int NONE = -1;

    /** What a shard's copies are worth. */
    public enum State {
        /** The backup (if any) holds every acknowledged object of the shard: it may be promoted. */
        FULL,
        /**
         * The backup was just assigned and the primary is copying the shard to it while serving; it gets every new
         * reservation too, but may not be promoted until the primary marks it {@link #FULL}.
         */
        FILLING,
        /**
         * The primary is gone and no backup could take over (none, or one still filling): the shard is unavailable
         * and its PUTs acknowledged since its last full backup existed only on the lost primary. Reported, not hidden.
         */
        LOST;

        String text() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    public ShardMap {
        if (primaries.length != backups.length || primaries.length != states.length || primaries.length == 0
                || Integer.bitCount(primaries.length) != 1) {
            throw new IllegalArgumentException("shard count " + primaries.length + " is not a power of two (backups "
                    + backups.length + ", states " + states.length + ")");
        }
        sessions = new TreeMap<>(sessions);
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

    public State state(int shard) {
        return states[shard];
    }

    /** The session server {@code id} was registered under when the map named it, or 0 if it names it not. */
    public long session(int id) {
        return sessions.getOrDefault(id, 0L);
    }

    /** Whether this map names {@code id} with {@code session}: a server holding what the map counts on. */
    public boolean names(int id, long session) {
        return session != 0 && session(id) == session;
    }

    /** Every server the map names. */
    public Set<Integer> servers() {
        Set<Integer> all = new TreeSet<>();
        for (int s = 0; s < shards(); s++) {
            all.add(primaries[s]);
            all.add(backups[s]);
        }
        all.remove(NONE);
        return all;
    }

    /** Whether some shard's backup is still being filled. */
    public boolean filling() {
        return Arrays.asList(states).contains(State.FILLING);
    }

    /**
     * The first map over {@code live} servers (id to session): shard s has primary {@code ids[s mod n]} and backup
     * the next, so primaries and backups spread evenly and a shard's two copies are on different servers. Both copies
     * start empty, so the backups are full. One server alone serves every shard without a backup.
     */
    public static ShardMap initial(int shards, Map<Integer, Long> live) {
        List<Integer> ids = new ArrayList<>(new TreeSet<>(live.keySet()));
        if (ids.isEmpty()) {
            throw new IllegalArgumentException("no servers to make a shard map of");
        }
        int[] p = new int[shards];
        int[] b = new int[shards];
        State[] st = new State[shards];
        for (int s = 0; s < shards; s++) {
            p[s] = ids.get(s % ids.size());
            b[s] = ids.size() == 1 ? NONE : ids.get((s + 1) % ids.size());
            st[s] = State.FULL;
        }
        return new ShardMap(1, p, b, st, new TreeMap<>(live));
    }

    /**
     * The map for the servers {@code live} now (id to the session of its registration). A named server that is not
     * live, or live under another session, is gone: a shard whose primary is gone gets its full backup as primary
     * (promotion), or, if the backup is none or still filling, is {@link State#LOST}; a shard whose backup is gone has
     * none. Then every shard that is not lost and has no backup gets one: the live server not in the shard with the
     * fewest roles (lowest id on a tie), {@link State#FILLING}. Returns this map if nothing changed, else one with the
     * next epoch.
     */
    public ShardMap reconcile(Map<Integer, Long> live) {
        int[] p = primaries.clone();
        int[] b = backups.clone();
        State[] st = states.clone();
        for (int s = 0; s < p.length; s++) {
            if (st[s] == State.LOST) {
                continue;
            }
            boolean primaryHere = here(p[s], live);
            boolean backupHere = b[s] != NONE && here(b[s], live);
            if (!primaryHere) {
                if (backupHere && st[s] == State.FULL) {
                    p[s] = b[s];
                    b[s] = NONE;
                } else {
                    st[s] = State.LOST;
                }
            } else if (b[s] != NONE && !backupHere) {
                b[s] = NONE;
                st[s] = State.FULL;
            }
        }
        SortedMap<Integer, Long> named = new TreeMap<>();
        Map<Integer, Integer> load = new TreeMap<>();
        for (Map.Entry<Integer, Long> server : live.entrySet()) {
            load.put(server.getKey(), 0);
        }
        for (int s = 0; s < p.length; s++) {
            load.computeIfPresent(p[s], (id, n) -> n + 1);
            if (b[s] != NONE) {
                load.computeIfPresent(b[s], (id, n) -> n + 1);
            }
        }
        for (int s = 0; s < p.length; s++) {
            if (st[s] != State.LOST && b[s] == NONE) {
                int primary = p[s];
                Integer pick = load.entrySet().stream().filter(e -> e.getKey() != primary)
                        .min(Map.Entry.<Integer, Integer>comparingByValue().thenComparing(Map.Entry.comparingByKey()))
                        .map(Map.Entry::getKey).orElse(null);
                if (pick != null) {
                    b[s] = pick;
                    st[s] = State.FILLING;
                    load.merge(pick, 1, Integer::sum);
                }
            }
        }
        for (int s = 0; s < p.length; s++) {
            for (int id : new int[] {p[s], b[s]}) {
                if (id != NONE) {
                    // a live server keeps (or, picked now, gets) its live session; a lost shard's dead primary its old one
                    named.put(id, live.getOrDefault(id, session(id)));
                }
            }
        }
        if (Arrays.equals(p, primaries) && Arrays.equals(b, backups) && Arrays.equals(st, states)
                && named.equals(sessions)) {
            return this;
        }
        return new ShardMap(epoch + 1, p, b, st, named);
    }

    private boolean here(int id, Map<Integer, Long> live) {
        Long session = live.get(id);
        return session != null && session == session(id);
    }

    /** This map with shard {@code shard}'s filling backup marked full (its primary finished copying), next epoch. */
    public ShardMap withFull(int shard) {
        State[] st = states.clone();
        st[shard] = State.FULL;
        return new ShardMap(epoch + 1, primaries, backups, st, sessions);
    }

    public byte[] encode() {
        StringBuilder text = new StringBuilder("epoch " + epoch + "\nshards " + shards() + "\n");
        for (int s = 0; s < shards(); s++) {
            text.append(s).append(' ').append(primaries[s]).append(' ').append(backups[s]).append(' ')
                    .append(states[s].text()).append('\n');
        }
        text.append("sessions");
        sessions.forEach((id, session) -> text.append(' ').append(id).append(':').append(session));
        return text.append('\n').toString().getBytes(StandardCharsets.UTF_8);
    }

    public static ShardMap decode(byte[] data) {
        String[] lines = new String(data, StandardCharsets.UTF_8).split("\n");
        try {
            long epoch = Long.parseLong(field(lines, 0, "epoch"));
            int shards = Integer.parseInt(field(lines, 1, "shards"));
            if (lines.length != 3 + shards) {
                throw new IllegalArgumentException(lines.length - 3 + " shard lines for " + shards + " shards");
            }
            int[] p = new int[shards];
            int[] b = new int[shards];
            State[] st = new State[shards];
            for (int s = 0; s < shards; s++) {
                String[] f = lines[2 + s].trim().split(" ");
                if (f.length != 4 || Integer.parseInt(f[0]) != s) {
                    throw new IllegalArgumentException("line '" + lines[2 + s] + "' is not 'shard primary backup state' "
                            + "for shard " + s);
                }
                p[s] = Integer.parseInt(f[1]);
                b[s] = Integer.parseInt(f[2]);
                st[s] = State.valueOf(f[3].toUpperCase(java.util.Locale.ROOT));
            }
            SortedMap<Integer, Long> sessions = new TreeMap<>();
            String named = field(lines, 2 + shards, "sessions");
            for (String pair : named.isEmpty() ? new String[0] : named.split(" ")) {
                String[] f = pair.split(":");
                if (f.length != 2) {
                    throw new IllegalArgumentException("session '" + pair + "' is not 'id:session'");
                }
                sessions.put(Integer.parseInt(f[0]), Long.parseLong(f[1]));
            }
            return new ShardMap(epoch, p, b, st, sessions);
        } catch (NumberFormatException | ArrayIndexOutOfBoundsException e) {
            throw new IllegalArgumentException("malformed shard map: " + e.getMessage(), e);
        }
    }

    private static String field(String[] lines, int index, String name) {
        if (lines.length <= index || !(lines[index] + " ").startsWith(name + " ")) {
            throw new IllegalArgumentException("shard map line " + index + " is not '" + name + " ...'");
        }
        return lines[index].substring(name.length()).trim();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ShardMap m && m.epoch == epoch && Arrays.equals(m.primaries, primaries)
                && Arrays.equals(m.backups, backups) && Arrays.equals(m.states, states) && m.sessions.equals(sessions);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(epoch) * 31 + Arrays.hashCode(primaries);
    }

    @Override
    public String toString() {
        return "epoch " + epoch + " primaries " + Arrays.toString(primaries) + " backups " + Arrays.toString(backups)
                + " states " + Arrays.toString(states);
    }
}
