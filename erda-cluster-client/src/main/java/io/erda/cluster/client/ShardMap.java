package io.erda.cluster.client;

import io.erda.protocol.memory.KeyHash;
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
 * shard's {@link State} (a lost shard also the identity of its last primary's store, or {@code -} if unknown), and
 * each named server's {@link Registration}: the ZooKeeper session it was registered under and its store's identity. A
 * server id whose live registration has another session is a new incarnation of it (a restart), which the map does
 * not count on to hold a shard's acknowledged data: it drops it as if it had left. The one exception is a lost shard's
 * last primary returning on the store it had ({@link #reconcile}). Text, so {@code zkCli get /erda/map} is readable:
 * <pre>
 * epoch 3
 * shards 4
 * 0 1 2 full 1
 * 1 2 3 filling 3
 * 2 3 1 lost 1 5f0c...e1
 * ...
 * named 1:72057594037927936:0b9a...47 2:...:... 3:...:...
 * </pre>
 */
public record ShardMap(long epoch, int[] primaries, int[] backups, State[] states, long[] backupSince,
                       String[] lostStores, SortedMap<Integer, Registration> named) {
    public static final int NONE = -1;
    private static final String UNKNOWN = "-";

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
         * until that primary returns on the same store ({@link #reconcile}). Its PUTs acknowledged since its last full
         * backup existed only there. Reported, not hidden.
         */
        LOST;

        public String text() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /**
     * A server's registration: the ZooKeeper session of its ephemeral {@code /servers/ID} and the identity of the
     * store it serves (erda-cluster's {@code StoreIdentity}: made with the store, kept in its directory).
     */
    public record Registration(long session, String store) {
        public Registration {
            if (store == null || store.isEmpty() || store.equals(UNKNOWN) || !store.chars().allMatch(
                    c -> c > ' ' && c != ':' && c < 127)) {
                throw new IllegalArgumentException("store identity '" + store + "' is not printable ASCII without "
                        + "blanks or ':'");
            }
        }
    }

    public ShardMap {
        if (primaries.length != backups.length || primaries.length != states.length
                || primaries.length != lostStores.length || primaries.length != backupSince.length || primaries.length == 0
                || Integer.bitCount(primaries.length) != 1) {
            throw new IllegalArgumentException("shard count " + primaries.length + " is not a power of two (backups "
                    + backups.length + ", states " + states.length + ", lost stores " + lostStores.length + ")");
        }
        for (int s = 0; s < states.length; s++) {
            if (lostStores[s] != null && states[s] != State.LOST) {
                throw new IllegalArgumentException("shard " + s + " is " + states[s].text() + " yet records a lost "
                        + "primary's store " + lostStores[s]);
            }
        }
        named = new TreeMap<>(named);
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

    /**
     * The epoch of the map that gave shard {@code shard} its backup (or its primary and backup their roles): what
     * tells one assignment from the next, so a server dropped as a shard's backup and given it again later (by
     * rebalancing) is filled again, from nothing, even by a primary of the same session, and even by members that
     * did not see the maps in between. 0 in a map written before it was recorded.
     */
    public long backupSince(int shard) {
        return backupSince[shard];
    }

    /**
     * The store identity of lost shard {@code shard}'s last primary, recorded when the shard was lost (the store that
     * holds every acknowledged PUT of it), or null if the shard is not lost or its primary's store was unknown.
     */
    public String lostStore(int shard) {
        return lostStores[shard];
    }

    /** The session server {@code id} was registered under when the map named it, or 0 if it names it not. */
    public long session(int id) {
        Registration r = named.get(id);
        return r == null ? 0 : r.session();
    }

    /** The store identity server {@code id} had when the map named it, or null if it names it not. */
    public String store(int id) {
        Registration r = named.get(id);
        return r == null ? null : r.store();
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

    /** Per named server, the shards it leads (0 for one that only backs up). */
    public Map<Integer, Integer> primaryCounts() {
        Map<Integer, Integer> n = new TreeMap<>();
        servers().forEach(id -> n.put(id, 0));
        for (int p : primaries) {
            n.merge(p, 1, Integer::sum);
        }
        return n;
    }

    /** Per named server, the shards it is the backup of (0 for one that only leads). */
    public Map<Integer, Integer> backupCounts() {
        Map<Integer, Integer> n = new TreeMap<>();
        servers().forEach(id -> n.put(id, 0));
        for (int b : backups) {
            if (b != NONE) {
                n.merge(b, 1, Integer::sum);
            }
        }
        return n;
    }

    /**
     * Whether rebalancing is done: nothing fills, nothing is lost, every shard has a backup (with two servers or more),
     * and the servers' counts of primaries, and of roles, differ by one at most.
     */
    public boolean balanced() {
        boolean backed = servers().size() < 2 || Arrays.stream(backups).noneMatch(b -> b == NONE);
        return !filling() && !lost() && backed && spread(primaryCounts()) <= 1 && spread(roleCounts()) <= 1;
    }

    /** Per named server, its roles: the shards it leads plus those it is the backup of. */
    public Map<Integer, Integer> roleCounts() {
        Map<Integer, Integer> roles = new TreeMap<>(primaryCounts());
        backupCounts().forEach((id, n) -> roles.merge(id, n, Integer::sum));
        return roles;
    }

    private static int spread(Map<Integer, Integer> counts) {
        return counts.isEmpty() ? 0 : java.util.Collections.max(counts.values()) - java.util.Collections.min(counts.values());
    }

    /** Whether some shard's backup is still being filled. */
    public boolean filling() {
        return Arrays.asList(states).contains(State.FILLING);
    }

    /** Whether some shard is lost. */
    public boolean lost() {
        return Arrays.asList(states).contains(State.LOST);
    }

    /**
     * The first map over {@code live} servers (id to registration): shard s has primary {@code ids[s mod n]} and
     * backup the next, so primaries and backups spread evenly and a shard's two copies are on different servers. Both
     * copies start empty, so the backups are full. One server alone serves every shard without a backup.
     */
    public static ShardMap initial(int shards, Map<Integer, Registration> live) {
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
        long[] since = new long[shards];
        Arrays.fill(since, 1);
        return new ShardMap(1, p, b, st, since, new String[shards], new TreeMap<>(live));
    }

    /**
     * The map for the servers {@code live} now (id to its registration). A named server that is not live, or live
     * under another session, is gone: a shard whose primary is gone gets its full backup as primary (promotion), or,
     * if the backup is none or still filling, is {@link State#LOST}, recording the store identity the map had for
     * that primary; a shard whose backup is gone has none.
     *
     * <p>A lost shard whose last primary is live again with the very store recorded (the same server on the same
     * files, under a new session: a restart, or a whole cluster's) is <em>re-adopted</em>: that server is its primary
     * again, {@link State#FULL} without a backup. Its store holds every acknowledged PUT of the shard (a PUT is
     * acknowledged only after its WRITE to the primary, and nothing was acknowledged while the shard was lost), and
     * nothing deleted its keys of the shard meanwhile (only a filling backup deletes its old keys of a shard, and a
     * lost shard has none). Returning with another store (wiped, replaced) it is not: the shard stays lost.
     *
     * <p>Then every shard that is not lost and has no backup gets one: the live server not in the shard with the
     * fewest roles in shards not lost (lowest id on a tie), {@link State#FILLING}. If none of that changed anything
     * and no backup is filling, one {@linkplain #rebalanced rebalancing move}. Returns this map if nothing changed,
     * else one with the next epoch.
     */
    public ShardMap reconcile(Map<Integer, Registration> live) {
        int[] p = primaries.clone();
        int[] b = backups.clone();
        State[] st = states.clone();
        long[] since = backupSince.clone();
        String[] lostStore = lostStores.clone();
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
                    lostStore[s] = store(p[s]);
                }
            } else if (b[s] != NONE && !backupHere) {
                b[s] = NONE;
                st[s] = State.FULL;
            }
        }
        for (int s = 0; s < p.length; s++) {
            if (st[s] == State.LOST && readoptable(p[s], lostStore[s], live)) {
                b[s] = NONE;
                st[s] = State.FULL;
                lostStore[s] = null;
            }
        }
        SortedMap<Integer, Registration> nowNamed = new TreeMap<>();
        Map<Integer, Integer> load = new TreeMap<>();
        for (Map.Entry<Integer, Registration> server : live.entrySet()) {
            load.put(server.getKey(), 0);
        }
        for (int s = 0; s < p.length; s++) {
            if (st[s] == State.LOST) {
                continue; // serves nobody: its dead (or wiped) primary is free for other roles
            }
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
                    since[s] = epoch + 1;
                    load.merge(pick, 1, Integer::sum);
                }
            }
        }
        boolean changed = !Arrays.equals(p, primaries) || !Arrays.equals(b, backups) || !Arrays.equals(st, states);
        if (!changed && !Arrays.asList(st).contains(State.FILLING)) {
            rebalanced(p, b, st, since, load, epoch + 1);
        }
        for (int s = 0; s < p.length; s++) {
            for (int id : new int[] {p[s], b[s]}) {
                if (id != NONE) {
                    // a live server keeps (or, picked now, gets) its live registration; a lost shard's dead primary its old one
                    Registration r = live.getOrDefault(id, named.get(id));
                    if (r != null) {
                        nowNamed.put(id, r);
                    }
                }
            }
        }
        if (Arrays.equals(p, primaries) && Arrays.equals(b, backups) && Arrays.equals(st, states)
                && Arrays.equals(lostStore, lostStores) && nowNamed.equals(named)) {
            return this;
        }
        return new ShardMap(epoch + 1, p, b, st, since, lostStore, nowNamed);
    }

    /**
     * One rebalancing move, in place, or none if the roles are as even as they can be ({@code load}: each live
     * server's roles in shards not lost). A server that joined or returned gets its share this way, one move per map,
     * each only once the previous fill is done:
     * <ol>
     *   <li><b>Switch</b>: if primaries are uneven (one server leads two more shards than another) and a shard led by
     *       a server with more primaries has a full backup with at least two fewer, the two swap roles. Both copies
     *       hold every acknowledged PUT, so nothing is copied; the new primary acknowledges PUTs only once clients'
     *       map leases on the old map have run out, and the old one's replica reservations are refused meanwhile
     *       ([cluster], "Fencing").</li>
     *   <li>Else <b>move a backup</b>: if roles are uneven by two or more, or primaries are uneven and no switch could
     *       fix them, the server with the fewest roles (then fewest primaries, then lowest id) becomes the filling
     *       backup of a shard it is not in whose backup has at least two roles more (preferring a shard whose primary
     *       leads the most, so a switch can follow). The old backup is dropped; the new one is filled while the shard
     *       is served, as any new backup.</li>
     * </ol>
     * Each move lowers the spread of the counts it looks at, so moves end.
     */
    static void rebalanced(int[] p, int[] b, State[] st, long[] since, Map<Integer, Integer> load, long newEpoch) {
        if (load.size() < 2) {
            return;
        }
        Map<Integer, Integer> leads = new TreeMap<>();
        load.keySet().forEach(id -> leads.put(id, 0));
        for (int s = 0; s < p.length; s++) {
            if (st[s] != State.LOST) {
                leads.computeIfPresent(p[s], (id, n) -> n + 1);
            }
        }
        int fewestLeads = java.util.Collections.min(leads.values());
        int mostLeads = java.util.Collections.max(leads.values());
        if (mostLeads - fewestLeads > 1) {
            int best = -1;
            int bestGap = 1;
            for (int s = 0; s < p.length; s++) {
                if (st[s] == State.FULL && b[s] != NONE && leads.containsKey(p[s]) && leads.containsKey(b[s])) {
                    int gap = leads.get(p[s]) - leads.get(b[s]);
                    if (gap > bestGap) {
                        best = s;
                        bestGap = gap;
                    }
                }
            }
            if (best >= 0) {
                int primary = p[best];
                p[best] = b[best];
                b[best] = primary;
                since[best] = newEpoch;
                return;
            }
        }
        int fewest = load.entrySet().stream().min(Map.Entry.<Integer, Integer>comparingByValue()
                .thenComparing(e -> leads.get(e.getKey())).thenComparing(Map.Entry.comparingByKey()))
                .map(Map.Entry::getKey).orElseThrow();
        int fewestRoles = load.get(fewest);
        boolean rolesUneven = java.util.Collections.max(load.values()) - fewestRoles > 1;
        if (!rolesUneven && mostLeads - fewestLeads <= 1) {
            return;
        }
        int pick = -1;
        for (int s = 0; s < p.length; s++) {
            if (st[s] != State.FULL || b[s] == NONE || p[s] == fewest || b[s] == fewest || !load.containsKey(b[s])) {
                continue;
            }
            boolean relieves = rolesUneven ? load.get(b[s]) - fewestRoles >= 2 : load.get(b[s]) >= fewestRoles;
            if (relieves && (pick < 0 || leads.getOrDefault(p[s], 0) > leads.getOrDefault(p[pick], 0))) {
                pick = s;
            }
        }
        if (pick >= 0) {
            b[pick] = fewest;
            st[pick] = State.FILLING;
            since[pick] = newEpoch;
        }
    }

    /** Whether a lost shard whose last primary was {@code id} on store {@code store} can have it back as primary. */
    private static boolean readoptable(int id, String store, Map<Integer, Registration> live) {
        Registration r = live.get(id);
        return r != null && store != null && store.equals(r.store());
    }

    /**
     * Why lost shard {@code shard} stays lost although its last primary is live, or null if it is not or is not live:
     * that server returned with another store than the one the shard was lost on.
     */
    public String refusal(int shard, Map<Integer, Registration> live) {
        Registration r = live.get(primaries[shard]);
        if (states[shard] != State.LOST || r == null || r.store().equals(lostStores[shard])) {
            return null;
        }
        return "shard " + shard + " stays LOST: its last primary, server " + primaries[shard] + ", is back with store "
                + r.store() + ", not store " + (lostStores[shard] == null ? "(unknown)" : lostStores[shard])
                + " that held the shard (wiped or replaced): its acknowledged PUTs are not there";
    }

    private boolean here(int id, Map<Integer, Registration> live) {
        Registration r = live.get(id);
        return r != null && r.session() == session(id);
    }

    /** This map with shard {@code shard}'s filling backup marked full (its primary finished copying), next epoch. */
    public ShardMap withFull(int shard) {
        State[] st = states.clone();
        st[shard] = State.FULL;
        return new ShardMap(epoch + 1, primaries, backups, st, backupSince, lostStores, named);
    }

    public byte[] encode() {
        StringBuilder text = new StringBuilder("epoch " + epoch + "\nshards " + shards() + "\n");
        for (int s = 0; s < shards(); s++) {
            text.append(s).append(' ').append(primaries[s]).append(' ').append(backups[s]).append(' ')
                    .append(states[s].text()).append(' ').append(backupSince[s]);
            if (states[s] == State.LOST) {
                text.append(' ').append(lostStores[s] == null ? UNKNOWN : lostStores[s]);
            }
            text.append('\n');
        }
        text.append("named");
        named.forEach((id, r) -> text.append(' ').append(id).append(':').append(r.session()).append(':')
                .append(r.store()));
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
            String[] lostStore = new String[shards];
            long[] since = new long[shards];
            for (int s = 0; s < shards; s++) {
                String[] f = lines[2 + s].trim().split(" ");
                boolean lost = f.length >= 4 && f[3].equals(State.LOST.text());
                // "shard primary backup state since [store]"; a map written before since was recorded has none
                boolean withSince = f.length == (lost ? 6 : 5);
                if (f.length != (lost ? 5 : 4) && !withSince || Integer.parseInt(f[0]) != s) {
                    throw new IllegalArgumentException("line '" + lines[2 + s] + "' is not 'shard primary backup state "
                            + "since' (a lost one: 'shard primary backup lost since store') for shard " + s);
                }
                p[s] = Integer.parseInt(f[1]);
                b[s] = Integer.parseInt(f[2]);
                st[s] = State.valueOf(f[3].toUpperCase(java.util.Locale.ROOT));
                since[s] = withSince ? Long.parseLong(f[4]) : 0;
                lostStore[s] = lost && !f[f.length - 1].equals(UNKNOWN) ? f[f.length - 1] : null;
            }
            SortedMap<Integer, Registration> named = new TreeMap<>();
            String servers = field(lines, 2 + shards, "named");
            for (String triple : servers.isEmpty() ? new String[0] : servers.split(" ")) {
                String[] f = triple.split(":");
                if (f.length != 3) {
                    throw new IllegalArgumentException("named server '" + triple + "' is not 'id:session:store'");
                }
                named.put(Integer.parseInt(f[0]), new Registration(Long.parseLong(f[1]), f[2]));
            }
            return new ShardMap(epoch, p, b, st, since, lostStore, named);
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
                && Arrays.equals(m.backups, backups) && Arrays.equals(m.states, states)
                && Arrays.equals(m.backupSince, backupSince) && Arrays.equals(m.lostStores, lostStores)
                && m.named.equals(named);
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
