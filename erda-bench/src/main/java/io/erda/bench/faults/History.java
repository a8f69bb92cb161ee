package io.erda.bench.faults;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * One process's history: a text file of one line per event, each written with one {@code write(2)} as it happens,
 * so a process killed with -9 leaves every line it wrote whole (a line cut short can only be the last, and the
 * checker ignores a last line without its newline). Times are {@link System#nanoTime()}, CLOCK_MONOTONIC on Linux,
 * one clock for every process of the machine.
 *
 * <pre>
 * P key seq t0             a PUT invoked          D key seq t0      a DELETE invoked
 * A key seq t1             acknowledged (returned: durable)
 * E key seq t1 reason      failed: may or may not have taken effect
 * X key seq t1 fault       returned, but a write fault was injected into it: may or may not have taken effect
 * G key t0 t1 result       a GET: a sequence number, "null", or "BAD reason"
 * R key t0 t1 result       the campaign's read-back after a restart; t0 is the moment the server died
 * W kind                   a write fault applied (drop, truncate, delay)
 * B                        a connection broken on purpose
 * K key seq where          the process kills itself with SIGKILL at its next WRITE (before or in the middle)
 * </pre>
 */
final class History implements AutoCloseable {
    private final FileOutputStream out;

    History(Path file) {
        try {
            out = new FileOutputStream(file.toFile(), true);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    void line(String text) {
        try {
            out.write((text + "\n").getBytes(StandardCharsets.US_ASCII));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        try {
            out.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
