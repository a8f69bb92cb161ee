package io.erda.protocol.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class LogAddressTest {
    @Test
    void packedAddressRoundTripsLargestValues() {
        long address = LogAddress.pack(LogAddress.MAX_HEADS - 1, AtomicWord.MAX_OFFSET);
        assertThat(LogAddress.headId(address)).isEqualTo(LogAddress.MAX_HEADS - 1);
        assertThat(LogAddress.offsetUnits(address)).isEqualTo(AtomicWord.MAX_OFFSET);
    }

    @Test
    void chainOffsetSplitsIntoRegionAndOffsetInRegion() {
        long regionSize = 1 << 20;
        long chain = 3 * regionSize + 4096;
        assertThat(LogAddress.regionIndexForOffset(chain, regionSize)).isEqualTo(3);
        assertThat(LogAddress.offsetInRegion(chain, regionSize)).isEqualTo(4096);
        assertThat(LogAddress.chainOffset(3, 4096, regionSize)).isEqualTo(chain);
    }

    @Test
    void lastUnitOfAChainIsSixteenGibMinusEight() {
        long last = LogAddress.MAX_CHAIN_BYTES - 8;
        assertThat(LogAddress.MAX_CHAIN_BYTES).isEqualTo(16L << 30);
        assertThat(LogAddress.unitsForBytes(last)).isEqualTo(AtomicWord.MAX_OFFSET);
        assertThat(LogAddress.bytesForUnits(AtomicWord.MAX_OFFSET)).isEqualTo(last);
    }

    @Test
    void misalignedOrTooLargeChainOffsetIsRejected() {
        assertThatThrownBy(() -> LogAddress.unitsForBytes(12)).hasMessageContaining("12");
        assertThatThrownBy(() -> LogAddress.unitsForBytes(LogAddress.MAX_CHAIN_BYTES))
                .hasMessageContaining(Long.toString(LogAddress.MAX_CHAIN_BYTES));
    }
}
