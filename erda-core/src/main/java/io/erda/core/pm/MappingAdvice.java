package io.erda.core.pm;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * What is done to a PM file's mapping right after it is made, before the header is written or checked: the server's
 * huge pages ({@code --huge-pages}) map and verify here. Core itself calls no native function; an implementation
 * that cannot do what it promises throws, and the file is unmapped (and a new one not published).
 */
@FunctionalInterface
public interface MappingAdvice {
    /** Nothing: the mapping as the kernel made it. */
    MappingAdvice NONE = (path, mapping) -> { };

    /**
     * @param path    the file's name in the store ({@link PmRegion#path()})
     * @param mapping the whole mapping, header included, starting at file offset 0
     */
    void mapped(Path path, MemorySegment mapping);
}
