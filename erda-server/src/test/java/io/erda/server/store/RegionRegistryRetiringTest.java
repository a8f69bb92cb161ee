package io.erda.server.store;

import io.erda.core.log.LogHead;
import io.erda.core.pm.PmRegion;
import io.erda.core.testing.ShmTempDirFactory;
import io.erda.fabric.MemoryRegion;
import io.erda.protocol.RegionDescriptor;
import io.erda.fabric.Fabric;
import io.erda.server.ServerConfig;
import io.erda.server.TestStores;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static io.erda.server.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Retiring regions deregisters exactly those regions ([recycled-memory]): every other slot keeps a live registration,
 * whatever place the retired slot has among the registered ones.
 */
class RegionRegistryRetiringTest {
    private static final int SLOTS = 7;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    /**
     * The registry keeps a head's registrations in a sorted tree. Until 2026-11-28 it read a retired slot's
     * registration after removing its tree node; a node with two children is removed by moving its successor into
     * it, so the next slot's live registration was closed (clients: REMOTE_ACCESS_ERROR, "rkey ... unknown", on
     * every PUT and GET there) and the retired one left open. Found by CleaningOverNetworkTest under load.
     */
    @Test
    void retiringAnySlotClosesThatRegistrationOnlyAndLeavesTheOthersLive() {
        for (String scheme : TestStores.schemes()) {
            for (int retired = 0; retired < SLOTS; retired++) {
                Path home = dir.resolve(scheme + "-" + retired);
                ServerConfig config = TestStores.config(home, scheme, Duration.ofSeconds(30))
                        .withGeometry(1, 4096, TestStores.REGION, TestStores.SEGMENT);
                StoreStats stats = new StoreStats();
                try (Store store = config.openStore(stats);
                     Fabric fabric = Fabric.open(config.listen(), Map.of());
                     RegionRegistry registry = new RegionRegistry(fabric, store.directory(), 0,
                             config.pmEmulation().configuration(config.persistence()), stats)) {
                    LogHead head = store.directory().head(0);
                    for (int key = 0; head.currentChain().size() < SLOTS; key++) {
                        store.reserve(MemorySegment.ofArray(bytes("key-" + key)), 4000, false);
                    }
                    store.locked(() -> {
                        registry.chainGrew(0); // a server registers growth as its store reports it
                        return null;
                    });
                    MemoryRegion[] before = new MemoryRegion[SLOTS];
                    for (int slot = 0; slot < SLOTS; slot++) {
                        before[slot] = registry.region(0, slot);
                        assertThat(before[slot]).as(scheme + ": slot " + slot + " registered").isNotNull();
                    }
                    PmRegion region = head.resolve((long) retired * TestStores.REGION).region();

                    registry.retiring(0, List.of(region));

                    Set<Integer> live = fabric.regions().stream().map(MemoryRegion::rkey)
                            .collect(Collectors.toSet());
                    String where = scheme + ", retiring slot " + retired + " of " + SLOTS;
                    assertThat(live).as(where + ": the retired registration is closed").doesNotContain(before[retired].rkey());
                    List<RegionDescriptor> described = registry.headArray().heads().getFirst().regions();
                    for (int slot = 0; slot < SLOTS; slot++) {
                        if (slot == retired) {
                            assertThat(registry.region(0, slot)).as(where).isNull();
                            // described as an empty region, or not at all past the last registered slot
                            assertThat(slot < described.size() ? described.get(slot).length() : 0)
                                    .as(where + ": the retired slot as clients see it").isZero();
                        } else {
                            assertThat(registry.region(0, slot)).as(where + ": slot " + slot).isSameAs(before[slot]);
                            assertThat(live).as(where + ": slot " + slot + "'s registration is live")
                                    .contains(before[slot].rkey());
                            assertThat(described.get(slot).rkey()).as(where + ": slot " + slot + " as clients see it")
                                    .isEqualTo(before[slot].rkey());
                        }
                    }
                }
            }
        }
    }
}
