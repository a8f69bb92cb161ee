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

    /**
     * Whether a new file gets all its pages when it is made, written as zeros through the file ({@code write(2)})
     * before it is mapped, instead of being extended sparse. For an advice that populates the mapping (huge pages): a
     * page the kernel allocates for a write to the file is allocated under the file's lock only, where populating a
     * hole through the mapping allocates (and zeroes) it under the process's memory-map lock, which every mmap and
     * munmap of the process then waits for: the server JVM's collector maps heap as it grows, and a request thread
     * that needed a new heap page waited 11 to 17 ms for it while a 1 GiB region was populated.
     */
    default boolean allocatesNewFiles() {
        return false;
    }
}
