package io.erda.server;

import io.erda.core.log.LogHead;
import io.erda.protocol.memory.ObjectLayout;
import io.erda.server.store.Store;
import java.lang.foreign.MemorySegment;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** Small store geometries and helpers shared by the tests. */
public final class TestStores {
    public static final int HEADS = 2;
    public static final long CAPACITY = 1024;
    public static final long REGION = 1L << 20;
    public static final long SEGMENT = 64L << 10;

    private TestStores() {
    }

    /**
     * The fabrics the tests that serve over the network run over, from the system property {@code erda.test.fabrics}
     * (comma-separated, default {@code tcp,shm}; the same property erda-client's end-to-end suites read). Only
     * scripts/test-softroce selects verbs, inside the VM that has a real RDMA device.
     */
    public static List<String> schemes() {
        String value = System.getProperty("erda.test.fabrics", "tcp,shm");
        List<String> schemes = new ArrayList<>();
        for (String s : value.split(",")) {
            String scheme = s.strip().toLowerCase(Locale.ROOT);
            if (scheme.isEmpty() || schemes.contains(scheme)) {
                continue;
            }
            if (!List.of("tcp", "shm", "verbs").contains(scheme)) {
                throw new IllegalArgumentException("erda.test.fabrics=" + value + ": no fabric '" + scheme
                        + "' (known: tcp, shm, verbs)");
            }
            schemes.add(scheme);
        }
        if (schemes.isEmpty()) {
            throw new IllegalArgumentException("erda.test.fabrics=" + value + " selects no fabric");
        }
        return schemes;
    }

    /**
     * A config for a small store in {@code dir} listening on {@code scheme} (tcp on port 0, shm under dir, verbs on
     * port 0 of {@code erda.softroce.address}).
     */
    public static ServerConfig config(Path dir, String scheme, Duration lease) {
        URI listen = scheme.equals("shm") ? URI.create("shm://" + dir.resolve("fabric").toAbsolutePath().toUri().getRawPath())
                : anyPort(scheme);
        return ServerConfig.defaults(dir.resolve("store"), listen).withGeometry(HEADS, CAPACITY, REGION, SEGMENT)
                .withLease(lease);
    }

    /** Port 0 of a network fabric: tcp on the loopback address, verbs on {@code erda.softroce.address}. */
    public static URI anyPort(String scheme) {
        return switch (scheme) {
            case "tcp" -> URI.create("tcp://127.0.0.1:0");
            case "verbs" -> URI.create("verbs://" + System.getProperty("erda.softroce.address", "192.0.2.1") + ":0");
            default -> throw new IllegalArgumentException("no port of fabric " + scheme);
        };
    }

    public static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** One counter of the server's STATS text ({@code name=value} lines); fails naming it if there is none. */
    public static long stat(RequestServer server, String name) {
        String prefix = name + "=";
        return server.stats().lines().filter(l -> l.startsWith(prefix)).mapToLong(l -> Long.parseLong(
                l.substring(prefix.length()))).findFirst().orElseThrow(() -> new AssertionError("no stat " + name));
    }

    /** Writes a complete object at a reservation, as a client's one-sided WRITE would. */
    public static void writeObject(Store store, Store.Reserved r, byte[] key, byte[] value, boolean tombstone) {
        LogHead head = store.directory().head(r.head());
        ObjectLayout.encode(head.slice(r.chainOffset(), r.objectLength()), 0, MemorySegment.ofArray(key),
                MemorySegment.ofArray(value), tombstone);
    }

    /** Reserves and writes a complete version. */
    public static Store.Reserved put(Store store, String key, String value) {
        Store.Reserved r = store.reserve(MemorySegment.ofArray(bytes(key)), bytes(value).length, false);
        writeObject(store, r, bytes(key), bytes(value), false);
        return r;
    }

    public static String get(Store store, String key) {
        byte[] v = store.get(MemorySegment.ofArray(bytes(key)));
        return v == null ? null : new String(v, StandardCharsets.UTF_8);
    }
}
