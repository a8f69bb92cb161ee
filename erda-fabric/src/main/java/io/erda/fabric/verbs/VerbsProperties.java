package io.erda.fabric.verbs;

import io.erda.fabric.FabricException;
import java.util.Map;

/**
 * What {@code Fabric.open(verbs://..., properties)} understands:
 * <ul>
 *   <li>{@code verbs.device}: the RDMA device name as ibv_devices lists it (default: the first one), or
 *       {@value #SOFT_DEVICE} for the in-JVM software RNIC that tests use; everything above the symbol lookup and the
 *       ibv_context is the same code either way. The software RNIC is no part of the production jars: it is the
 *       {@link io.erda.ffm.verbs.SoftwareRnic} that ServiceLoader finds, {@code io.erda.softrnic.SharedSoftRnic}
 *       of the test-scope dependency {@code io.erda:erda-soft-rnic};</li>
 *   <li>{@code verbs.soft-rnic}: with {@code verbs.device=soft}, the class name of the
 *       {@link io.erda.ffm.verbs.SoftwareRnic} to use (public, with a public no-argument constructor) instead of
 *       the first that ServiceLoader finds (default: none named);</li>
 *   <li>{@code verbs.port}: the device port (default 1);</li>
 *   <li>{@code verbs.gid-index}: the GID table index used on RoCE ports (default 0; RoCE v2 is often 1 or 3, see
 *       {@code show_gids});</li>
 *   <li>{@code verbs.cm}: how connections are set up: {@value #CM_TCP} (default, the QP-info side channel on the
 *       URI's host:port) or {@value #CM_RDMACM} (librdmacm: the URI's host:port is an rdma_cm address; the device is
 *       the one rdma_cm opened, chosen by {@code verbs.device} as usual);</li>
 *   <li>{@code verbs.poll-spin-polls}: how many more times a thread waiting on a completion queue polls it, back to
 *       back, after its first poll found nothing, before the time-based phases below (default
 *       {@value #DEFAULT_POLL_SPIN_POLLS}; at most {@value #MAX_POLL_SPIN_POLLS}). A count, not a time, so that it costs a
 *       few microseconds on a host CPU (where an RNIC completes a small READ in about two) and stays as many polls
 *       under emulation, where a time-based spin holds off the kernel's rxe work (see VerbsCompletionQueue);</li>
 *   <li>{@code verbs.poll-spin-ns}: how long such a thread then busy-polls before it starts yielding between polls
 *       (default 0; at most {@value #MAX_POLL_SPIN_NANOS}). Spinning trades a core for the latency of a yield; on
 *       SoftRoCE under emulation it starves the kernel's rxe work (see VerbsCompletionQueue).</li>
 * </ul>
 */
public record VerbsProperties(String device, int port, int gidIndex, boolean rdmaCm, int pollSpinPolls,
                              long pollSpinNanos, String softRnic) {
    public static final String DEVICE = "verbs.device";
    public static final String PORT = "verbs.port";
    public static final String GID_INDEX = "verbs.gid-index";
    public static final String CONNECTION_MANAGER = "verbs.cm";
    public static final String CM_TCP = "tcp";
    public static final String CM_RDMACM = "rdmacm";
    public static final String SOFT_DEVICE = "soft";
    public static final String SOFT_RNIC = "verbs.soft-rnic";
    public static final String POLL_SPIN_NANOS = "verbs.poll-spin-ns";
    public static final long MAX_POLL_SPIN_NANOS = 10_000_000;
    public static final String POLL_SPIN_POLLS = "verbs.poll-spin-polls";
    public static final int DEFAULT_POLL_SPIN_POLLS = 16;
    public static final int MAX_POLL_SPIN_POLLS = 1_000_000;

    /**
     * The given properties over the JVM's system properties of the same names: a server or client that opens its
     * fabric from a URI alone (erda-server, erda-cli, ErdaClient.connect) is pointed at a device with
     * {@code -Dverbs.device=mlx5_1} (scripts: {@code ERDA_JAVA_OPTS}); a property in the map wins.
     */
    public static VerbsProperties parseWithSystemDefaults(Map<String, String> properties) {
        Map<String, String> merged = new java.util.HashMap<>();
        for (String key : new String[] {DEVICE, PORT, GID_INDEX, CONNECTION_MANAGER, POLL_SPIN_POLLS, POLL_SPIN_NANOS,
                SOFT_RNIC}) {
            String value = System.getProperty(key);
            if (value != null) {
                merged.put(key, value);
            }
        }
        merged.putAll(properties);
        return parse(merged);
    }

    public static VerbsProperties parse(Map<String, String> properties) {
        String cm = properties.getOrDefault(CONNECTION_MANAGER, CM_TCP);
        if (!cm.equals(CM_TCP) && !cm.equals(CM_RDMACM)) {
            throw new FabricException(CONNECTION_MANAGER + "=" + cm + " is not supported: use " + CM_TCP
                    + " (TCP side channel) or " + CM_RDMACM + " (librdmacm)");
        }
        return new VerbsProperties(properties.get(DEVICE), integer(properties, PORT, 1), integer(properties, GID_INDEX, 0),
                cm.equals(CM_RDMACM),
                (int) bounded(properties, POLL_SPIN_POLLS, DEFAULT_POLL_SPIN_POLLS, MAX_POLL_SPIN_POLLS, "polls"),
                bounded(properties, POLL_SPIN_NANOS, 0, MAX_POLL_SPIN_NANOS, "nanoseconds"), properties.get(SOFT_RNIC));
    }

    /** {@code key}'s value, a count of {@code unit} in 0..max, or {@code fallback} when absent. */
    private static long bounded(Map<String, String> properties, String key, long fallback, long max, String unit) {
        String value = properties.get(key);
        if (value == null) {
            return fallback;
        }
        long parsed;
        try {
            parsed = Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            throw new FabricException(key + "=" + value + " is not a number of " + unit);
        }
        if (parsed < 0 || parsed > max) {
            throw new FabricException(key + "=" + value + " outside 0.." + max);
        }
        return parsed;
    }

    private static int integer(Map<String, String> properties, String key, int fallback) {
        String value = properties.get(key);
        if (value == null) {
            return fallback;
        }
        try {
            int parsed = Integer.parseInt(value.trim());
            if (parsed < 0 || parsed > 255) {
                throw new FabricException(key + "=" + value + " outside 0..255");
            }
            return parsed;
        } catch (NumberFormatException e) {
            throw new FabricException(key + "=" + value + " is not a number");
        }
    }

    public boolean soft() {
        return SOFT_DEVICE.equals(device);
    }
}
