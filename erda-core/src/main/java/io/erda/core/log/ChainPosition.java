package io.erda.core.log;

import io.erda.core.pm.PmRegion;

/** A chain offset resolved to its region and the offset inside that region's data area. */
public record ChainPosition(int regionIndex, long offsetInRegion, PmRegion region) {
}
