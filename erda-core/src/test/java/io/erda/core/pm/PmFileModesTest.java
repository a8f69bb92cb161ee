package io.erda.core.pm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.core.PmDirectory;
import io.erda.core.StoreGeometry;
import io.erda.core.testing.ShmTempDirFactory;
import io.erda.protocol.memory.LogGeometry;
import io.erda.protocol.memory.TableGeometry;
import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Who may write a store: the modes of what a store creates (whatever the umask), and the refusal, naming path, mode
 * and owner, of a directory or file another user could write.
 */
class PmFileModesTest {
    private static final StoreGeometry GEOMETRY = new StoreGeometry(2, TableGeometry.forCapacity(128, 32),
            new LogGeometry(32 * 1024, 8 * 1024, 4096));

    @TempDir(factory = ShmTempDirFactory.class)
    Path tmp;

    private static PosixFileAttributes attributes(Path p) throws IOException {
        return Files.readAttributes(p, PosixFileAttributes.class);
    }

    private static String mode(Path p) throws IOException {
        return PosixFilePermissions.toString(attributes(p).permissions());
    }

    private static List<Path> files(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.toList();
        }
    }

    /** The group this process's files get: one it may give its files without being root. */
    private String ownGroup() throws IOException {
        Path probe = Files.createTempFile(tmp, "group", ".probe");
        String group = attributes(probe).group().getName();
        Files.delete(probe);
        return group;
    }

    private Path store(String group) {
        Path dir = tmp.resolve("store");
        PmDirectory.create(dir, GEOMETRY, WriteLatencyModel.OFF, group).close();
        return dir;
    }

    @Test
    void aStoreIsItsOwnersOnly() throws IOException {
        Files.createDirectory(tmp.resolve("store"), PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwxr-xr-x"))); // an existing directory as a umask of 022 makes it
        Path dir = store(null);
        assertThat(mode(dir)).isEqualTo("rwx------");
        List<Path> files = files(dir);
        assertThat(files).hasSizeGreaterThanOrEqualTo(4); // table, head records, a region per head
        for (Path f : files) {
            assertThat(mode(f)).as(f.toString()).isEqualTo("rw-------");
        }
        PmDirectory.open(dir, GEOMETRY, WriteLatencyModel.OFF).close();
    }

    @Test
    void aStoreForAGroupIsSetgidAndItsFilesAreTheGroups() throws IOException {
        String group = ownGroup();
        Path dir = store(group);
        assertThat(mode(dir)).isEqualTo("rwxrwx---");
        assertThat((int) Files.getAttribute(dir, "unix:mode") & 07777).isEqualTo(02770);
        assertThat(attributes(dir).group().getName()).isEqualTo(group);
        for (Path f : files(dir)) {
            assertThat(mode(f)).as(f.toString()).isEqualTo("rw-rw----");
            assertThat(attributes(f).group().getName()).isEqualTo(group);
        }
        PmDirectory.open(dir, GEOMETRY, WriteLatencyModel.OFF, group).close();
        assertThatThrownBy(() -> PmDirectory.open(dir, GEOMETRY, WriteLatencyModel.OFF))
                .isInstanceOf(PmPermissionException.class)
                .hasMessageStartingWith("refusing " + dir + " (mode rwxrwx---, owner " + System.getProperty("user.name")
                        + ", group " + group + "): its group " + group + " may write it and the server was given no group");
    }

    @Test
    void anUnknownGroupIsRefusedNamingIt() {
        assertThatThrownBy(() -> store("erda-no-such-group"))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("group erda-no-such-group does not exist");
    }

    @Test
    void aWorldWritableFileIsRefusedNamingPathModeAndOwner() throws IOException {
        Path dir = store(null);
        Path table = dir.resolve(PmDirectory.TABLE_FILE);
        Files.setPosixFilePermissions(table, PosixFilePermissions.fromString("rw-rw-rw-"));
        assertThatThrownBy(() -> PmDirectory.open(dir, GEOMETRY, WriteLatencyModel.OFF))
                .isInstanceOf(PmPermissionException.class)
                .hasMessageContaining("refusing " + table + " (mode rw-rw-rw-, owner " + System.getProperty("user.name"))
                .hasMessageContaining("every user may write it");
    }

    @Test
    void aGroupWritableFileInADirectoryOfItsOwnerIsRefused() throws IOException {
        Path dir = store(null);
        Path region = dir.resolve(PmDirectory.regionFileName(1, 0));
        Files.setPosixFilePermissions(region, PosixFilePermissions.fromString("rw-rw----"));
        assertThatThrownBy(() -> PmDirectory.open(dir, GEOMETRY, WriteLatencyModel.OFF))
                .isInstanceOf(PmPermissionException.class)
                .hasMessageContaining("refusing " + region + " (mode rw-rw----")
                .hasMessageContaining("and its directory " + dir + " (mode rwx------");
    }

    @Test
    void aWorldWritableDirectoryIsRefusedEvenForTheConfiguredGroup() throws IOException {
        String group = ownGroup();
        Path dir = store(group);
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
        assertThatThrownBy(() -> PmDirectory.open(dir, GEOMETRY, WriteLatencyModel.OFF, group))
                .isInstanceOf(PmPermissionException.class)
                .hasMessageContaining("refusing " + dir + " (mode rwxrwxrwx").hasMessageContaining("every user may write it");
    }

    @Test
    void aFileOfAnotherUserIsRefused() throws IOException {
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")),
                "only root can give a file to another user");
        Path dir = store(null);
        Path records = files(dir).stream().filter(p -> p.getFileName().toString().startsWith("heads")).findFirst().orElseThrow();
        Files.setOwner(records, FileSystems.getDefault().getUserPrincipalLookupService().lookupPrincipalByName("nobody"));
        assertThatThrownBy(() -> PmDirectory.open(dir, GEOMETRY, WriteLatencyModel.OFF))
                .isInstanceOf(PmPermissionException.class)
                .hasMessageContaining("refusing " + records + " (mode rw-------, owner nobody")
                .hasMessageContaining("it belongs to nobody, not to root");
    }
}
