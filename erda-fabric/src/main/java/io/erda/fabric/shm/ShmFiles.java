package io.erda.fabric.shm;

import io.erda.fabric.FabricException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipalNotFoundException;
import java.util.Set;

/**
 * The modes of what the shm provider creates (homes, lock, exports, counters and ring files, the listener's socket
 * and a listen directory it had to create): owner only, {@code 0600} and directories {@code 0700}, or, with the fabric
 * property {@code group}, {@code 0660}/{@code 0770} owned by that group, for peers of other users in it. Modes are set
 * explicitly after creation, so the umask neither widens nor narrows them. shm is cooperative (a peer maps these files
 * and the target's memory), so these modes are its only protection: see docs/ARCHITECTURE.md, "Security model".
 */
final class ShmFiles {
    private static final Set<PosixFilePermission> OWNER_FILE = PosixFilePermissions.fromString("rw-------");
    private static final Set<PosixFilePermission> OWNER_DIR = PosixFilePermissions.fromString("rwx------");
    private static final Set<PosixFilePermission> GROUP_FILE = PosixFilePermissions.fromString("rw-rw----");
    private static final Set<PosixFilePermission> GROUP_DIR = PosixFilePermissions.fromString("rwxrwx---");

    private final GroupPrincipal group;

    private ShmFiles(GroupPrincipal group) {
        this.group = group;
    }

    /** Owner-only if {@code groupName} is null, else group access for that group (which must exist). */
    static ShmFiles of(String groupName) {
        if (groupName == null || groupName.isEmpty()) {
            return new ShmFiles(null);
        }
        try {
            return new ShmFiles(FileSystems.getDefault().getUserPrincipalLookupService().lookupPrincipalByGroupName(groupName));
        } catch (UserPrincipalNotFoundException e) {
            throw new FabricException("shm fabric property group=" + groupName + ": no such group");
        } catch (IOException e) {
            throw new FabricException("shm fabric property group=" + groupName + ": cannot look it up: " + e, e);
        }
    }

    /** Creates the directory {@code dir} (its parent must exist) with this policy's mode. */
    void createDirectory(Path dir) throws IOException {
        Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(OWNER_DIR));
        restrict(dir);
    }

    /** Creates {@code dir} and missing parents; if this created {@code dir} itself, gives it this policy's mode. */
    void createDirectories(Path dir) throws IOException {
        if (Files.isDirectory(dir)) {
            return;
        }
        Files.createDirectories(dir.getParent());
        try {
            createDirectory(dir);
        } catch (java.nio.file.FileAlreadyExistsException e) {
            if (!Files.isDirectory(dir)) {
                throw e;
            }
        }
    }

    /** Opens a new file (it must not exist) for reading and writing, with this policy's mode. */
    FileChannel createFile(Path file, OpenOption... more) throws IOException {
        Set<OpenOption> options = new java.util.HashSet<>(Set.of(more));
        options.addAll(Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE));
        FileChannel channel = FileChannel.open(file, options, PosixFilePermissions.asFileAttribute(OWNER_FILE));
        try {
            restrict(file);
        } catch (IOException e) {
            channel.close();
            throw e;
        }
        return channel;
    }

    /** Gives an existing file, socket or directory this policy's group and mode (group first, then the mode). */
    void restrict(Path path) throws IOException {
        PosixFileAttributeView view = Files.getFileAttributeView(path, PosixFileAttributeView.class);
        boolean dir = Files.isDirectory(path);
        if (group != null) {
            view.setGroup(group);
        }
        view.setPermissions(group == null ? (dir ? OWNER_DIR : OWNER_FILE) : (dir ? GROUP_DIR : GROUP_FILE));
    }
}
