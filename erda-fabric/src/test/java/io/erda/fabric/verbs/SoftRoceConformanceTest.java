package io.erda.fabric.verbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.fabric.Access;
import io.erda.fabric.Backing;
import io.erda.fabric.Endpoint;
import io.erda.fabric.FabricCapabilities;
import io.erda.fabric.FabricException;
import io.erda.fabric.MemoryRegion;
import io.erda.fabric.RegisterOptions;
import io.erda.fabric.SyncEndpoint;
import io.erda.fabric.conformance.FabricConformanceTest;
import io.erda.ffm.libc.DeviceDax;
import io.erda.ffm.verbs.DeviceAttributes;
import io.erda.ffm.verbs.NativeCapabilities;
import io.erda.ffm.verbs.QueuePairEx;
import io.erda.ffm.verbs.Verbs;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import jdk.nio.mapmode.ExtendedMapMode;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The conformance suite on rxe0 (scripts/softroce-vm), plus what only a real kernel device shows: which path
 * ATOMIC_WRITE and FLUSH take, read per capability from the device (the kernel: rxe executes both from Linux 6.2 on)
 * and from the loaded libibverbs (rdma-core: wr_atomic_write from release 44, wr_flush from 45), and what the kernel
 * does with memory of a file on a DAX file system and of a device-DAX device. scripts/test-softroce runs one subclass under Linux 6.1 and one
 * under 6.12, so both paths are asserted in one run.
 */
abstract class SoftRoceConformanceTest extends FabricConformanceTest {
    private static final Pattern KERNEL = Pattern.compile("^(\\d+)\\.(\\d+)");

    /** Whether the running kernel is at least {@code major.minor} (os.version, e.g. 6.12.117+deb12-amd64). */
    static boolean kernelAtLeast(int major, int minor) {
        Matcher m = KERNEL.matcher(System.getProperty("os.version"));
        assertThat(m.find()).as("os.version %s", System.getProperty("os.version")).isTrue();
        int ma = Integer.parseInt(m.group(1));
        return ma > major || ma == major && Integer.parseInt(m.group(2)) >= minor;
    }

    @Test
    void listenerOnPortZeroReportsTheRealPort() {
        assertThat(listener.uri().getScheme()).isEqualTo("verbs");
        assertThat(listener.uri().getPort()).isPositive();
    }

    /**
     * The device's flags are the kernel's: rxe reports ATOMIC_WRITE and FLUSH to persistence exactly from Linux 6.2 on.
     * The library's are its release's. The fabric claims a native operation where both have it, the QP is made with
     * exactly those extended ops, and each operation then takes that path: ATOMIC_WRITE executes or is refused by name;
     * FLUSH is the device's own or the READ that emulates it, which lands the range's first bytes in the fabric's
     * scratch buffer.
     */
    @Test
    void atomicWriteAndFlushTakeThePathDeviceAndLibraryAllow() throws Exception {
        VerbsFabric fabric = (VerbsFabric) initiator;
        DeviceAttributes device = fabric.deviceAttributes();
        NativeCapabilities library = fabric.libraryCapabilities();
        FabricCapabilities caps = fabric.capabilities();
        boolean rxeHasThem = kernelAtLeast(6, 2);
        assertThat(device.extendedQueried()).as("ibv_query_device_ex on %s", caps.device()).isTrue();
        assertThat(device.atomicWrite()).as("ATOMIC_WRITE in device_cap_flags_ex of %s", caps.device())
                .isEqualTo(rxeHasThem);
        assertThat(device.flushPersistent()).as("FLUSH_PERSISTENT in device_cap_flags_ex of %s", caps.device())
                .isEqualTo(rxeHasThem);
        assertThat(library.rdmaCoreVersion()).as("rdma-core release of the loaded libibverbs").isPositive();
        assertThat(library.nativeAtomicWrite())
                .isEqualTo(library.rdmaCoreVersion() >= NativeCapabilities.ATOMIC_WRITE_SINCE);
        assertThat(library.nativeFlush()).isEqualTo(library.rdmaCoreVersion() >= NativeCapabilities.FLUSH_SINCE
                && Verbs.ERDA_HAVE_WR_FLUSH == 1);
        assertThat(caps.atomicWrite()).isEqualTo(device.atomicWrite() && library.nativeAtomicWrite());
        assertThat(caps.nativeFlush()).isEqualTo(device.flushPersistent() && library.nativeFlush());

        MemoryRegion remote = targetMemory(4096, Access.all());
        Endpoint[] pair = connectPair();
        QueuePairEx ops = ((VerbsEndpoint) pair[0]).extendedOps();
        assertThat(ops != null && ops.hasAtomicWrite()).as("QP made with IBV_QP_EX_WITH_ATOMIC_WRITE")
                .isEqualTo(caps.atomicWrite());
        assertThat(ops != null && ops.hasFlush()).as("QP made with IBV_QP_EX_WITH_FLUSH").isEqualTo(caps.nativeFlush());
        assertThat(atomicWriteExecutedElseRefusedByName()).isEqualTo(caps.atomicWrite());

        long marker = 0x0F1E_2D3C_4B5A_6978L;
        remote.segment().set(ValueLayout.JAVA_LONG, 512, marker);
        MemorySegment scratch = fabric.flushScratch().segment();
        scratch.fill((byte) 0);
        try (SyncEndpoint sync = new SyncEndpoint(pair[0])) {
            sync.flush(remote.address() + 512, 64, remote.rkey());
        }
        assertThat(scratch.get(ValueLayout.JAVA_LONG, 0)).as("the range's first word read into the scratch buffer:"
                + " FLUSH %s", caps.nativeFlush() ? "native" : "emulated by a READ")
                .isEqualTo(caps.nativeFlush() ? 0L : marker);
    }

    /**
     * Memory of a file on a DAX file system (scripts/softroce-vm --pmem mounts one, named by erda.test.pmDir): mapped
     * MAP_SYNC, as the store maps its PM files there. Registration pins the pages for good, which the kernel refuses
     * for a DAX file (the file system may move its blocks); only on-demand paging registers it unpinned, and rxe
     * under 6.12 has none. Either it registers and a WRITE lands in the file, or it is refused naming the file and
     * the cause.
     */
    @Test
    void daxFileMemoryIsRegisteredOrRefusedByName() throws Exception {
        String pmDir = System.getProperty("erda.test.pmDir");
        Assumptions.assumeTrue(pmDir != null, "no DAX file system in this VM (scripts/softroce-vm without --pmem)");
        Path file = Files.createTempFile(Path.of(pmDir), "verbs-dax", ".pm");
        try {
            MemorySegment mapped;
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                ch.truncate(2 << 20);
                mapped = ch.map(ExtendedMapMode.READ_WRITE_SYNC, 0, 2 << 20, arena); // DAX, or this throws
            }
            RegisterOptions options = RegisterOptions.of(Access.all()).withBacking(new Backing(file, 0));
            MemoryRegion region;
            try {
                region = target.register(mapped, options);
            } catch (FabricException refused) {
                assertThat(refused).hasMessageContaining("EOPNOTSUPP").hasMessageContaining(file.toString())
                        .hasMessageContaining("DAX file system");
                return;
            }
            Endpoint[] pair = connectPair();
            MemoryRegion local = initiatorBuffer(64);
            local.segment().set(ValueLayout.JAVA_LONG, 0, 77L);
            try (SyncEndpoint sync = new SyncEndpoint(pair[0])) {
                sync.write(local, 0, 8, region.address(), region.rkey());
            }
            assertThat(mapped.get(ValueLayout.JAVA_LONG, 0)).isEqualTo(77L);
        } finally {
            Files.deleteIfExists(file);
        }
    }

    /**
     * Memory of a device-DAX device (scripts/softroce-vm --pmem-mode devdax makes one, named by erda.test.devdax),
     * mapped by {@link DeviceDax}: unlike a file on a DAX file system, the kernel pins it for good (FOLL_LONGTERM is
     * refused for fsdax only), so rxe registers it. A remote WRITE lands in the device, read back through the mapping
     * and through a second mapping of the device; a remote READ returns what the mapping holds.
     */
    @Test
    void deviceDaxMemoryIsRegisteredAndARemoteWriteAndReadReachIt() throws Exception {
        String name = System.getProperty("erda.test.devdax");
        Assumptions.assumeTrue(name != null && !name.isEmpty(),
                "no device-DAX device in this VM (scripts/softroce-vm without --pmem-mode devdax)");
        Path device = Path.of(name);
        long length = DeviceDax.geometry(device).alignment();
        long written = 0x5EED_DA7A_0000_0000L | (System.nanoTime() & 0xFFFF_FFFFL);
        long held = ~written;
        long at = length - 4096; // far from the start: the whole mapping is registered, not just its first page
        try (DeviceDax mapping = DeviceDax.map(device, length)) {
            assertThat(mapping.syncMapped()).as("MAP_SYNC on %s", device).isTrue();
            mapping.segment().set(ValueLayout.JAVA_LONG, at + 8, held);
            try (MemoryRegion region = target.register(mapping.segment(), RegisterOptions.of(Access.all()))) {
                Endpoint[] pair = connectPair();
                MemoryRegion local = initiatorBuffer(64);
                local.segment().set(ValueLayout.JAVA_LONG, 0, written);
                try (SyncEndpoint sync = new SyncEndpoint(pair[0])) {
                    sync.write(local, 0, 8, region.address() + at, region.rkey());
                    assertThat(mapping.segment().get(ValueLayout.JAVA_LONG, at)).as("the WRITE in the mapping")
                            .isEqualTo(written);
                    sync.read(local, 16, 8, region.address() + at + 8, region.rkey());
                    assertThat(local.segment().get(ValueLayout.JAVA_LONG, 16)).as("what a READ returns")
                            .isEqualTo(held);
                }
            }
        }
        try (DeviceDax again = DeviceDax.map(device, length)) {
            assertThat(again.segment().get(ValueLayout.JAVA_LONG, at)).as("the WRITE in the device").isEqualTo(written);
        }
    }
}
