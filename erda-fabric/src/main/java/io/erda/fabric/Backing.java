package io.erda.fabric;

import java.nio.file.Path;
import java.util.Objects;

/**
 * The file a registered segment is mapped from, and the file offset of the segment's first byte.
 * Providers that share memory between processes (shm) need it to let a peer map the same bytes;
 * network providers ignore it.
 */
public record Backing(Path file, long fileOffset) {
    public Backing {
        Objects.requireNonNull(file, "file");
        if (fileOffset < 0) {
            throw new IllegalArgumentException("file offset " + fileOffset + " is negative");
        }
    }
}
