package io.erda.cluster.client;

import java.net.URI;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Logger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;

/**
 * What a cluster member or client knows of the cluster, kept current by ZooKeeper watches (Curator's
 * {@link CuratorCache}): the live servers and their fabric URIs, and the shard map. Listeners run on Curator's event
 * thread after each change.
 */
public final class ClusterView implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(ClusterView.class.getName());

    private final CuratorCache serverCache;
    private final CuratorCache mapCache;
    private final Map<Integer, URI> servers = new ConcurrentHashMap<>();
    /** Per live server, the session its registration belongs to (the ephemeral node's owner). */
    private final Map<Integer, Long> sessions = new ConcurrentHashMap<>();
    private final CopyOnWriteArrayList<Runnable> listeners = new CopyOnWriteArrayList<>();
    private volatile ShardMap map;

    public ClusterView(CuratorFramework zk) {
        this.serverCache = CuratorCache.build(zk, Zk.SERVERS);
        this.mapCache = CuratorCache.build(zk, Zk.MAP);
        serverCache.listenable().addListener(CuratorCacheListener.builder()
                .forAll((type, before, after) -> serversChanged(before, after)).build());
        mapCache.listenable().addListener(CuratorCacheListener.builder()
                .forAll((type, before, after) -> mapChanged(after)).build());
    }

    public ClusterView start() {
        serverCache.start();
        mapCache.start();
        return this;
    }

    public void onChange(Runnable listener) {
        listeners.add(listener);
    }

    /** The current map, or null before the coordinator wrote the first. */
    public ShardMap map() {
        return map;
    }

    /** The fabric URI of live server {@code id}, or null if it is not registered. */
    public URI server(int id) {
        return servers.get(id);
    }

    public Map<Integer, URI> servers() {
        return Map.copyOf(servers);
    }

    /** The session of live server {@code id}'s registration, or 0 if it is not registered. */
    long session(int id) {
        return sessions.getOrDefault(id, 0L);
    }

    private void serversChanged(ChildData before, ChildData after) {
        if (before != null && after == null) {
            Integer id = id(before.getPath());
            if (id != null) {
                servers.remove(id);
                sessions.remove(id);
            }
        } else if (after != null) {
            Integer id = id(after.getPath());
            if (id != null && after.getData() != null) {
                servers.put(id, Zk.uri(after.getData()));
                if (after.getStat() != null) {
                    sessions.put(id, after.getStat().getEphemeralOwner());
                }
            }
        }
        fire();
    }

    private void mapChanged(ChildData after) {
        if (after != null && Zk.MAP.equals(after.getPath()) && after.getData() != null && after.getData().length > 0) {
            offer(ShardMap.decode(after.getData()));
        }
        fire();
    }

    /** Takes {@code next} as the map if it is newer than the one held (a watch, or a read by {@link MapLease}). */
    synchronized void offer(ShardMap next) {
        ShardMap current = map;
        if (current == null || next.epoch() > current.epoch()) {
            map = next;
            LOG.info(() -> "shard map " + next);
        }
    }

    private void fire() {
        for (Runnable l : listeners) {
            l.run();
        }
    }

    private static Integer id(String path) {
        if (!path.startsWith(Zk.SERVERS + "/")) {
            return null;
        }
        try {
            return Integer.parseInt(path.substring(Zk.SERVERS.length() + 1));
        } catch (NumberFormatException e) {
            return null;
        }
    }

    @Override
    public void close() {
        serverCache.close();
        mapCache.close();
    }
}
