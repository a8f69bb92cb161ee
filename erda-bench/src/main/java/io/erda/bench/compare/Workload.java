package io.erda.bench.compare;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/** The paper's four YCSB workloads (§5.1), each a file under resources/workloads. */
enum Workload {
    A("workloada", true, true),
    B("workloadb", true, true),
    C("workloadc", true, false),
    UPDATE_ONLY("workload-update-only", false, true);

    final String file;
    final boolean reads;
    final boolean updates;

    Workload(String file, boolean reads, boolean updates) {
        this.file = file;
        this.reads = reads;
        this.updates = updates;
    }

    /** The name in tables, summary.json and on the command line: A, B, C, update-only. */
    String label() {
        return this == UPDATE_ONLY ? "update-only" : name();
    }

    static Workload of(String label) {
        for (Workload w : values()) {
            if (w.label().equalsIgnoreCase(label) || w.file.equalsIgnoreCase(label)) {
                return w;
            }
        }
        throw new IllegalArgumentException("workload '" + label + "' is not A, B, C or update-only");
    }

    /** Copies the workload file into {@code dir} (YCSB reads a file path) and returns it. */
    Path extractTo(Path dir) throws IOException {
        Files.createDirectories(dir);
        Path target = dir.resolve(file);
        try (InputStream in = Workload.class.getResourceAsStream("/workloads/" + file)) {
            if (in == null) {
                throw new IOException("workload resource /workloads/" + file + " is missing from the class path");
            }
            Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
        }
        return target;
    }
}
