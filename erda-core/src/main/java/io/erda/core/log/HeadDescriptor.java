package io.erda.core.log;

import java.nio.file.Path;
import java.util.List;

/**
 * What a client needs to address one head's chain (paper §3.3: the head array sent at connect).
 * The server attaches the fabric's remote keys; core knows nothing of them.
 */
public record HeadDescriptor(int headId, List<Region> regions) {
    public HeadDescriptor {
        regions = List.copyOf(regions);
    }

    /** One region of the chain: chain offsets {@code [index*dataLength, (index+1)*dataLength)}. */
    public record Region(int regionIndex, Path path, long dataFileOffset, long dataLength) {
    }
}
