package io.erda.history;

import java.nio.file.Path;
import java.util.List;

/**
 * What the processes of a test did and saw: its operations, and notes that are not operations (a fault injected, a
 * server started) for whoever reads the history beside the checker.
 */
public record History(List<Operation> operations, List<Note> notes) {

    /** A remark a process made at a moment: no operation, ignored by the checker. */
    public record Note(int process, long at, String text) {
    }

    public History {
        operations = List.copyOf(operations);
        notes = List.copyOf(notes);
    }

    public static History of(List<Operation> operations) {
        return new History(operations, List.of());
    }

    /** The histories in these files as one ({@link HistoryFile}). */
    public static History read(List<Path> files) {
        return HistoryFile.read(files);
    }
}
