package io.erda.testlauncher;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A run's progress, one tab-separated record a line, written (and handed to the kernel) as it happens, so what a
 * run did is known even when its JVM dies under it (a native crash, a kill on timeout):
 * <pre>
 * start
 * running CLASS                 a test class started
 * test    CLASS NAME            a test started (a crash is attributed to the last one)
 * outcome CLASS P|S|F|E [N]     a test passed, was skipped, failed, erred (N: that many, for skipped containers)
 * problem F|E   LINE            its line in the Results section
 * class   CLASS RUN FAILURES ERRORS SKIPPED NANOS   a test class finished
 * end     RUN FAILURES ERRORS SKIPPED
 * killed  CLASS REASON          the JVM began to exit before the end (SIGTERM, System.exit)
 * exit    STATUS                appended by the script that ran the JVM
 * </pre>
 * Fields escape backslash, tab and newline.
 */
final class StateFile implements AutoCloseable {
    private final FileOutputStream out;

    StateFile(Path file) {
        try {
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            out = new FileOutputStream(file.toFile(), true);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the state file " + file, e);
        }
    }

    synchronized void write(String... fields) {
        StringBuilder sb = new StringBuilder();
        for (String f : fields) {
            if (!sb.isEmpty()) {
                sb.append('\t');
            }
            sb.append(escape(f));
        }
        sb.append('\n');
        try {
            out.write(sb.toString().getBytes(StandardCharsets.UTF_8)); // unbuffered: one write(2) per record
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public synchronized void close() throws IOException {
        out.close();
    }

    static List<String[]> read(Path file) throws IOException {
        List<String[]> records = new ArrayList<>();
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            if (line.isEmpty()) {
                continue;
            }
            String[] fields = line.split("\t", -1);
            for (int i = 0; i < fields.length; i++) {
                fields[i] = unescape(fields[i]);
            }
            records.add(fields);
        }
        return records;
    }

    static String escape(String s) {
        return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r");
    }

    static String unescape(String s) {
        StringBuilder sb = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && i + 1 < s.length()) {
                char n = s.charAt(++i);
                sb.append(switch (n) {
                    case 't' -> '\t';
                    case 'n' -> '\n';
                    case 'r' -> '\r';
                    default -> n;
                });
            } else {
                sb.append(c);
            }
        }
        return sb.toString();
    }
}
