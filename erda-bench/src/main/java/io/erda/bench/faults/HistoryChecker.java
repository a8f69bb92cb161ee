package io.erda.bench.faults;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Checks a fault campaign's histories ({@link History}). Every key has one writer that runs one operation at a
 * time, and its sequence numbers grow with time, so a key's versions are totally ordered by sequence number. Then:
 * <ul>
 *   <li><b>torn</b>: a GET (or read-back) returned bytes no PUT wrote whole: a value failing its own check, another
 *       key's value, a sequence number never PUT or PUT only after the GET had returned;</li>
 *   <li><b>stale</b>: a GET returned a version older than the last PUT or DELETE acknowledged before it began (or
 *       nothing, where neither that DELETE nor a later one could explain it);</li>
 *   <li><b>lost</b>: the same, for the campaign's read-back of every key after a server restart: the GET "began"
 *       when the server died, so every write acknowledged before the crash must read back.</li>
 * </ul>
 * A write that failed, or into which a fault was injected, or that was in flight at a crash, may or may not have
 * taken effect: it can explain a result, never be demanded. The last line of a file without its newline (a process
 * killed while writing it) is ignored.
 */
final class HistoryChecker {
    static final int EXAMPLES = 10;

    /** What the check found. */
    record Result(long acknowledged, long gets, long readBacks, long writeFaults, long brokenConnections,
                  long lost, long torn, long stale, List<String> examples) {
    }

    /** One key's writes: invocations by sequence number, acknowledgements in time order. */
    private static final class KeyWrites {
        final Map<Long, long[]> invoked = new HashMap<>(); // seq -> {t0, delete ? 1 : 0}
        long[] ackTime = new long[8];
        long[] ackSeq = new long[8];
        int acks;
        boolean sorted = true;
        final List<long[]> deletes = new ArrayList<>(); // {seq, t0}

        void invoke(long seq, long t0, boolean delete) {
            invoked.put(seq, new long[] {t0, delete ? 1 : 0});
            if (delete) {
                deletes.add(new long[] {seq, t0});
            }
        }

        void ack(long seq, long t1) {
            if (acks == ackTime.length) {
                ackTime = Arrays.copyOf(ackTime, acks * 2);
                ackSeq = Arrays.copyOf(ackSeq, acks * 2);
            }
            if (acks > 0 && t1 < ackTime[acks - 1]) {
                sorted = false;
            }
            ackTime[acks] = t1;
            ackSeq[acks++] = seq;
        }

        void sort() {
            if (sorted) {
                return;
            }
            Integer[] order = new Integer[acks];
            for (int i = 0; i < acks; i++) {
                order[i] = i;
            }
            Arrays.sort(order, (a, b) -> Long.compare(ackTime[a], ackTime[b]));
            long[] t = new long[acks];
            long[] s = new long[acks];
            for (int i = 0; i < acks; i++) {
                t[i] = ackTime[order[i]];
                s[i] = ackSeq[order[i]];
            }
            ackTime = t;
            ackSeq = s;
            sorted = true;
        }

        /** Index of the last acknowledgement before {@code t}, or -1. */
        int lastAckBefore(long t) {
            int lo = 0;
            int hi = acks - 1;
            int found = -1;
            while (lo <= hi) {
                int mid = (lo + hi) >>> 1;
                if (ackTime[mid] < t) {
                    found = mid;
                    lo = mid + 1;
                } else {
                    hi = mid - 1;
                }
            }
            return found;
        }

        boolean isDelete(long seq) {
            long[] inv = invoked.get(seq);
            return inv != null && inv[1] == 1;
        }

        /** Whether a DELETE with a sequence number above {@code seq} was invoked before {@code t}. */
        boolean deleteAfter(long seq, long t) {
            for (long[] d : deletes) {
                if (d[0] > seq && d[1] < t) {
                    return true;
                }
            }
            return false;
        }
    }

    private final Map<String, KeyWrites> keys = new HashMap<>();
    private final List<String> examples = new ArrayList<>();
    private long acknowledged;
    private long gets;
    private long readBacks;
    private long writeFaults;
    private long broken;
    private long lost;
    private long torn;
    private long stale;

    /** Checks every history file given. */
    static Result check(List<Path> files) {
        HistoryChecker c = new HistoryChecker();
        for (Path f : files) {
            c.readWrites(f);
        }
        c.keys.values().forEach(KeyWrites::sort);
        for (Path f : files) {
            c.checkReads(f);
        }
        return new Result(c.acknowledged, c.gets, c.readBacks, c.writeFaults, c.broken, c.lost, c.torn, c.stale,
                List.copyOf(c.examples));
    }

    private void readWrites(Path file) {
        for (String line : lines(file)) {
            String[] f = line.split(" ", 5);
            switch (f[0]) {
                case "P", "D" -> writes(f[1]).invoke(Long.parseLong(f[2]), Long.parseLong(f[3]), f[0].equals("D"));
                case "A" -> {
                    writes(f[1]).ack(Long.parseLong(f[2]), Long.parseLong(f[3]));
                    acknowledged++;
                }
                case "W" -> writeFaults++;
                case "B" -> broken++;
                default -> { }
            }
        }
    }

    private void checkReads(Path file) {
        for (String line : lines(file)) {
            if (line.startsWith("G ") || line.startsWith("R ")) {
                String[] f = line.split(" ", 5);
                checkRead(f[0].equals("R"), f[1], Long.parseLong(f[2]), Long.parseLong(f[3]), f[4], file, line);
            }
        }
    }

    private void checkRead(boolean readBack, String key, long t0, long t1, String result, Path file, String line) {
        if (readBack) {
            readBacks++;
        } else {
            gets++;
        }
        KeyWrites w = writes(key);
        if (result.startsWith("BAD")) {
            torn++;
            example("torn", file, line);
            return;
        }
        boolean absent = result.equals("null");
        long seq = absent ? -1 : Long.parseLong(result);
        if (!absent) {
            long[] inv = w.invoked.get(seq);
            if (inv == null || inv[0] > t1 || inv[1] == 1) {
                torn++;
                example("torn (never written whole: " + (inv == null ? "no such PUT" : inv[1] == 1 ? "a DELETE's number"
                        : "PUT only after the read") + ")", file, line);
                return;
            }
        }
        int last = w.lastAckBefore(t0);
        if (last < 0) {
            return; // nothing acknowledged before: any written version, or nothing, is explained
        }
        long ackSeq = w.ackSeq[last];
        boolean ok = absent ? w.isDelete(ackSeq) || w.deleteAfter(ackSeq, t1) : seq >= ackSeq;
        if (!ok) {
            if (readBack) {
                lost++;
                example("lost (acknowledged seq " + ackSeq + ")", file, line);
            } else {
                stale++;
                example("stale (acknowledged seq " + ackSeq + " before the GET began)", file, line);
            }
        }
    }

    private KeyWrites writes(String key) {
        return keys.computeIfAbsent(key, k -> new KeyWrites());
    }

    private void example(String what, Path file, String line) {
        if (examples.size() < EXAMPLES) {
            examples.add(what + ": " + file.getFileName() + ": " + line);
        }
    }

    /** The file's complete lines (a last line without its newline was cut short by a kill and is left out). */
    static List<String> lines(Path file) {
        try {
            byte[] bytes = Files.readAllBytes(file);
            int end = bytes.length;
            while (end > 0 && bytes[end - 1] != '\n') {
                end--;
            }
            List<String> out = new ArrayList<>();
            try (BufferedReader r = new BufferedReader(new java.io.StringReader(
                    new String(bytes, 0, end, StandardCharsets.US_ASCII)))) {
                for (String l; (l = r.readLine()) != null; ) {
                    if (!l.isEmpty()) {
                        out.add(l);
                    }
                }
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
