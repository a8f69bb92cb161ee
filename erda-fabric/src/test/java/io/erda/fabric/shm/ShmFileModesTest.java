package io.erda.fabric.shm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.fabric.Access;
import io.erda.fabric.Backing;
import io.erda.fabric.Fabric;
import io.erda.fabric.FabricException;
import io.erda.fabric.RegisterOptions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The modes of what the shm provider creates: its user's only, or its group's with the property {@code group}
 * (shm's checks are cooperative, so these modes are all that keeps other users out).
 */
class ShmFileModesTest {
    @TempDir
    Path tmp;

    private static PosixFileAttributes attributes(Path p) throws Exception {
        return Files.readAttributes(p, PosixFileAttributes.class);
    }

    private static String mode(Path p) throws Exception {
        return PosixFilePermissions.toString(attributes(p).permissions());
    }

    /** Opens a fabric, exports a region, listens on tmp/fabric; returns the fabric. */
    private ShmFabric exporting(Map<String, String> properties, Arena arena) throws Exception {
        Path file = tmp.resolve("region.pm");
        MemorySegment pm;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ch.truncate(4096);
            pm = ch.map(FileChannel.MapMode.READ_WRITE, 0, 4096, arena);
        }
        ShmFabric fabric = (ShmFabric) Fabric.open(ShmFabric.uriOf(tmp.resolve("fabric")), properties);
        fabric.listen(ShmFabric.uriOf(tmp.resolve("fabric")));
        fabric.register(pm, RegisterOptions.of(Access.all()).withBacking(new Backing(file, 0)));
        return fabric;
    }

    @Test
    void everythingIsItsUsersOnly() throws Exception {
        try (Arena arena = Arena.ofShared(); ShmFabric fabric = exporting(Map.of(), arena)) {
            Path home = fabric.homeIfCreated();
            assertThat(mode(tmp.resolve("fabric"))).as("the listen directory it made").isEqualTo("rwx------");
            assertThat(mode(home)).isEqualTo("rwx------");
            for (String f : new String[] {ShmHome.LOCK_FILE, ShmFabric.EXPORTS_FILE, ShmFabric.COUNTERS_FILE}) {
                assertThat(mode(home.resolve(f))).as(f).isEqualTo("rw-------");
            }
            assertThat(mode(tmp.resolve("fabric").resolve(ShmFabric.SOCKET_FILE))).as("the socket").isEqualTo("rw-------");
            Path ring = fabric.createRingFile();
            assertThat(mode(ring)).as("a ring file").isEqualTo("rw-------");
        }
    }

    @Test
    void withAGroupEverythingIsTheGroupsToo() throws Exception {
        Path probe = Files.createFile(tmp.resolve("probe"));
        String group = attributes(probe).group().getName();
        try (Arena arena = Arena.ofShared(); ShmFabric fabric = exporting(Map.of("group", group), arena)) {
            Path home = fabric.homeIfCreated();
            for (Path dir : new Path[] {tmp.resolve("fabric"), home}) {
                assertThat(mode(dir)).as(dir.toString()).isEqualTo("rwxrwx---");
                assertThat(attributes(dir).group().getName()).isEqualTo(group);
            }
            for (Path f : new Path[] {home.resolve(ShmHome.LOCK_FILE), home.resolve(ShmFabric.EXPORTS_FILE),
                    home.resolve(ShmFabric.COUNTERS_FILE), tmp.resolve("fabric").resolve(ShmFabric.SOCKET_FILE),
                    fabric.createRingFile()}) {
                assertThat(mode(f)).as(f.toString()).isEqualTo("rw-rw----");
                assertThat(attributes(f).group().getName()).isEqualTo(group);
            }
        }
    }

    @Test
    void anUnknownGroupIsRefusedNamingIt() {
        assertThatThrownBy(() -> Fabric.open(ShmFabric.uriOf(tmp), Map.of("group", "erda-no-such-group")))
                .isInstanceOf(FabricException.class).hasMessage("shm fabric property group=erda-no-such-group: no such group");
    }
}
