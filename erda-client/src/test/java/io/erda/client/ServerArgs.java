package io.erda.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Command-line options of ErdaServerMain, in one place. */
final class ServerArgs {
    private final List<String> args = new ArrayList<>();

    /**
     * No cleaning unless a test asks for it ({@link #cleanThreshold}): tests' regions are small enough for
     * erda-server's automatic threshold to clean them, and a test of chains, stats or admin runs must not meet runs it
     * did not start.
     */
    ServerArgs() {
        cleanThreshold(0);
        String put = System.getProperty(PUT_PROPERTY);
        if (put != null && !put.isBlank()) {
            put(put);
        }
    }

    /**
     * Runs the servers of every suite with {@code --put} of this property (reserve or one-sided): a suite runs in
     * one-sided mode with {@code -Derda.test.put=one-sided}. A server of a suite that asks for server-flush keeps the
     * reservation mode, which one-sided mode needs ({@link #toArray}).
     */
    static final String PUT_PROPERTY = "erda.test.put";

    static ServerArgs small() {
        // small regions and segments so tests chain regions and fill segments quickly; room for a 1 MiB value
        return new ServerArgs().heads(4).capacity(1 << 14).regionSize(4 << 20).segmentSize(2 << 20)
                .lease(Duration.ofMillis(500));
    }

    ServerArgs heads(int n) {
        return add("--heads", Integer.toString(n));
    }

    ServerArgs capacity(long buckets) {
        return add("--table-capacity", Long.toString(buckets));
    }

    ServerArgs regionSize(long bytes) {
        return add("--region-size", Long.toString(bytes));
    }

    ServerArgs segmentSize(long bytes) {
        return add("--segment-size", Long.toString(bytes));
    }

    ServerArgs lease(Duration lease) {
        return add("--lease-ms", Long.toString(lease.toMillis()));
    }

    ServerArgs persistence(String method) {
        return add("--persistence", method);
    }

    ServerArgs cleanThreshold(long bytes) {
        return add("--clean-threshold", Long.toString(bytes));
    }

    /** {@code --put reserve|one-sided}. */
    ServerArgs put(String mode) {
        return add("--put", mode);
    }

    ServerArgs blockSize(long bytes) {
        return add("--block-size", Long.toString(bytes));
    }

    ServerArgs pmEmulation(String mode) {
        return add("--pm-emulation", mode);
    }

    /** RDMP-SA sends values shorter than {@code bytes} in the request. */
    ServerArgs rdmpSaThreshold(long bytes) {
        return add("--rdmp-sa-threshold", Long.toString(bytes));
    }

    ServerArgs rdmpPoolSize(long bytes) {
        return add("--rdmp-pool-size", Long.toString(bytes));
    }

    private ServerArgs add(String option, String value) {
        int at = args.indexOf(option);
        if (at >= 0) {
            args.set(at + 1, value);
        } else {
            args.add(option);
            args.add(value);
        }
        return this;
    }

    String[] toArray() {
        int put = args.indexOf("--put");
        int persistence = args.indexOf("--persistence");
        if (put >= 0 && args.get(put + 1).equals("one-sided") && persistence >= 0
                && args.get(persistence + 1).equals("server-flush")) {
            // one-sided mode needs wsp or read-after-write (the server refuses server-flush with it)
            List<String> reserve = new ArrayList<>(args);
            reserve.subList(put, put + 2).clear();
            return reserve.toArray(String[]::new);
        }
        return args.toArray(String[]::new);
    }
}
