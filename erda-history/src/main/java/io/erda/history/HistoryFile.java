package io.erda.history;

import io.erda.history.Operation.Kind;
import io.erda.history.Operation.Outcome;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The line format of a history file, one event a line, written as it happens with one {@code write(2)} each
 * ({@link HistoryRecorder}), so that a process killed with -9 leaves every line whole but perhaps the last, which
 * has then no newline and is ignored.
 *
 * <pre>
 * invoke PROCESS OP write KEY VALUE T0   a write invoked (VALUE decimal, or "absent" for a delete)
 * invoke PROCESS OP read KEY T0          a read invoked
 * ok PROCESS OP T1 [VALUE]               it completed; a read says what it returned
 * fail PROCESS OP T1                     it definitely did not take effect
 * info PROCESS OP T1                     it ended without saying whether it took effect
 * note PROCESS T TEXT...                 a remark, not an operation
 * </pre>
 * (PROCESS, OP) names an operation within its file; several processes may append to one file if each has its own
 * PROCESS and writes whole lines. An invocation without a completion (its process was killed) is
 * {@link Outcome#INDETERMINATE}, completed {@link Operation#NEVER}. Times are monotonic nanoseconds.
 */
public final class HistoryFile {
    private HistoryFile() {
    }

    static String invoke(int process, long op, Kind kind, String key, long value, long t0) {
        return kind == Kind.WRITE
                ? "invoke " + process + " " + op + " write " + key + " " + Operation.valueText(value) + " " + t0
                : "invoke " + process + " " + op + " read " + key + " " + t0;
    }

    static String complete(int process, long op, Outcome outcome, long t1, Kind kind, long value) {
        String head = switch (outcome) {
            case OK -> "ok ";
            case FAILED -> "fail ";
            case INDETERMINATE -> "info ";
        };
        String line = head + process + " " + op + " " + t1;
        return outcome == Outcome.OK && kind == Kind.READ ? line + " " + Operation.valueText(value) : line;
    }

    static String note(int process, long at, String text) {
        return "note " + process + " " + at + " " + text.replace('\n', ' ').replace('\r', ' ');
    }

    /** Every file's operations (in the order they were invoked within a file) and notes, as one history. */
    public static History read(List<Path> files) {
        List<Operation> operations = new ArrayList<>();
        List<History.Note> notes = new ArrayList<>();
        for (Path f : files) {
            readInto(f, operations, notes);
        }
        return new History(operations, notes);
    }

    private record Invocation(int process, Kind kind, String key, long value, long t0) {
    }

    private static void readInto(Path file, List<Operation> operations, List<History.Note> notes) {
        Map<String, Invocation> pending = new LinkedHashMap<>();
        Map<String, Integer> slot = new HashMap<>(); // (process op) -> index in operations of its placeholder
        int number = 0;
        for (String line : completeLines(file)) {
            number++;
            if (line.isEmpty()) {
                continue;
            }
            String[] f = line.split(" ");
            try {
                switch (f[0]) {
                    case "invoke" -> {
                        String id = f[1] + " " + f[2];
                        if (!f[3].equals("write") && !f[3].equals("read")) {
                            throw new IllegalArgumentException("kind '" + f[3] + "' is neither read nor write");
                        }
                        Kind kind = f[3].equals("write") ? Kind.WRITE : Kind.READ;
                        long value = kind == Kind.WRITE ? parseValue(f[5]) : Operation.ABSENT;
                        long t0 = Long.parseLong(f[kind == Kind.WRITE ? 6 : 5]);
                        if (pending.put(id, new Invocation(Integer.parseInt(f[1]), kind, f[4], value, t0)) != null
                                || slot.containsKey(id)) {
                            throw new IllegalArgumentException("operation " + id + " invoked twice");
                        }
                        slot.put(id, operations.size());
                        operations.add(null);
                    }
                    case "ok", "fail", "info" -> {
                        String id = f[1] + " " + f[2];
                        Invocation i = pending.remove(id);
                        if (i == null) {
                            throw new IllegalArgumentException("operation " + id + " completes "
                                    + (slot.containsKey(id) ? "twice" : "without an invocation"));
                        }
                        Outcome outcome = switch (f[0]) {
                            case "ok" -> Outcome.OK;
                            case "fail" -> Outcome.FAILED;
                            default -> Outcome.INDETERMINATE;
                        };
                        long value = outcome == Outcome.OK && i.kind == Kind.READ ? parseValue(f[4]) : i.value;
                        operations.set(slot.get(id), new Operation(i.process, i.key, i.kind, value, i.t0,
                                Long.parseLong(f[3]), outcome));
                    }
                    case "note" -> notes.add(new History.Note(Integer.parseInt(f[1]), Long.parseLong(f[2]),
                            line.split(" ", 4).length == 4 ? line.split(" ", 4)[3] : ""));
                    default -> throw new IllegalArgumentException("unknown event '" + f[0] + "'");
                }
            } catch (RuntimeException e) {
                throw new IllegalArgumentException(file + ":" + number + ": " + e.getMessage() + ": '" + line + "'", e);
            }
        }
        for (Map.Entry<String, Invocation> e : pending.entrySet()) {
            Invocation i = e.getValue();
            operations.set(slot.get(e.getKey()), new Operation(i.process, i.key, i.kind, i.value, i.t0, Operation.NEVER,
                    Outcome.INDETERMINATE));
        }
    }

    private static long parseValue(String text) {
        return text.equals("absent") ? Operation.ABSENT : Long.parseLong(text);
    }

    /** The file's lines but a last one without its newline (cut short by a kill). */
    private static List<String> completeLines(Path file) {
        try {
            String text = Files.readString(file, StandardCharsets.UTF_8);
            int end = text.lastIndexOf('\n') + 1;
            return end == 0 ? List.of() : List.of(text.substring(0, end - 1).split("\n", -1));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
