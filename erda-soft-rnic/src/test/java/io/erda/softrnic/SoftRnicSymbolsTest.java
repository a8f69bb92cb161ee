package io.erda.softrnic;

import static org.assertj.core.api.Assertions.assertThat;

import io.erda.ffm.rdmacm.RdmaCmLibrary;
import io.erda.ffm.verbs.VerbsLibrary;
import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The software RNIC may only answer symbols the real libraries export: code tested against it must run against
 * rdma-core unchanged. (It once answered rdma_get_peer_addr, a static inline of rdma_cma.h that librdmacm does not
 * export; on SoftRoCE every rdma_cm connection request then failed.) The installed libibverbs and librdmacm are
 * the reference; the test needs the libraries, not an RDMA device.
 */
class SoftRnicSymbolsTest {
    @Test
    void everySymbolTheSoftRnicAnswersIsExportedByTheRealLibraries() {
        try (Arena arena = Arena.ofConfined(); SoftRnicDevice device = SoftRnic.shared().newDevice()) {
            SymbolLookup real = SymbolLookup.libraryLookup(VerbsLibrary.SONAME, arena)
                    .or(SymbolLookup.libraryLookup(RdmaCmLibrary.SONAME, arena));
            Set<String> missing = new TreeSet<>();
            for (String name : device.symbolNames()) {
                if (!name.equals(VerbsLibrary.SOFT_RNIC_WRITE_DELAY) && !name.equals(VerbsLibrary.SOFT_RNIC_DURABLE_MIRROR)
                        && real.find(name).isEmpty()) {
                    missing.add(name);
                }
            }
            assertThat(device.symbolNames()).contains("ibv_query_device", "rdma_get_src_port", "rdma_connect");
            assertThat(missing).as("symbols the soft RNIC answers that rdma-core does not export").isEmpty();
        }
    }
}
