package io.erda.history;

import io.erda.history.Operation.Kind;
import io.erda.history.Operation.Outcome;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Records operations as processes invoke and complete them, taking the times itself ({@link System#nanoTime()}).
 * Thread-safe: the threads of a test, each a process, share one. With a file, every event is also appended there at
 * once as one line ({@link HistoryFile}) with one {@code write(2)}, so whatever a kill -9 interrupts, the lines before
 * it are whole; {@link #history()} is what was recorded, as the file would read back.
 */
public final class HistoryRecorder implements AutoCloseable {
    private final FileOutputStream out;
    private final List<Operation> operations = new ArrayList<>();
    private final List<History.Note> notes = new ArrayList<>();
    private final Map<Long, Integer> pending = new HashMap<>(); // op -> index in operations
    private long nextOp;

    private HistoryRecorder(FileOutputStream out) {
        this.out = out;
    }

    public static HistoryRecorder inMemory() {
        return new HistoryRecorder(null);
    }

    /** Records into memory and appends every event to {@code file} (created if missing). */
    public static HistoryRecorder appendingTo(Path file) {
        try {
            return new HistoryRecorder(new FileOutputStream(file.toFile(), true));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A write of {@code value} ({@link Operation#ABSENT}: a delete) invoked now; returns the operation's id. */
    public synchronized long invokeWrite(int process, String key, long value) {
        return invoke(process, Kind.WRITE, key, value);
    }

    /** A read invoked now; returns the operation's id. */
    public synchronized long invokeRead(int process, String key) {
        return invoke(process, Kind.READ, key, Operation.ABSENT);
    }

    /** A write completed, or a read returned {@code valueRead}. */
    public synchronized void ok(long op, long valueRead) {
        complete(op, Outcome.OK, valueRead);
    }

    /** A write completed. */
    public synchronized void ok(long op) {
        complete(op, Outcome.OK, Operation.ABSENT);
    }

    /** The operation definitely did not take effect. */
    public synchronized void fail(long op) {
        complete(op, Outcome.FAILED, Operation.ABSENT);
    }

    /** The operation ended without saying whether it took effect. */
    public synchronized void info(long op) {
        complete(op, Outcome.INDETERMINATE, Operation.ABSENT);
    }

    public synchronized void note(int process, String text) {
        long now = System.nanoTime();
        notes.add(new History.Note(process, now, text));
        append(HistoryFile.note(process, now, text));
    }

    /** Everything recorded so far; an operation not yet completed is {@link Outcome#INDETERMINATE}, never completed. */
    public synchronized History history() {
        return new History(operations, notes);
    }

    private long invoke(int process, Kind kind, String key, long value) {
        long op = nextOp++;
        long now = System.nanoTime();
        pending.put(op, operations.size());
        operations.add(new Operation(process, key, kind, value, now, Operation.NEVER, Outcome.INDETERMINATE));
        append(HistoryFile.invoke(process, op, kind, key, value, now));
        return op;
    }

    private void complete(long op, Outcome outcome, long valueRead) {
        Integer index = pending.remove(op);
        if (index == null) {
            throw new IllegalStateException("operation " + op + " was never invoked or has completed already");
        }
        long now = System.nanoTime();
        Operation i = operations.get(index);
        long value = i.kind() == Kind.READ && outcome == Outcome.OK ? valueRead : i.value();
        operations.set(index, new Operation(i.process(), i.key(), i.kind(), value, i.invokedAt(), now, outcome));
        append(HistoryFile.complete(i.process(), op, outcome, now, i.kind(), value));
    }

    private void append(String line) {
        if (out == null) {
            return;
        }
        try {
            out.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public synchronized void close() {
        if (out != null) {
            try {
                out.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
