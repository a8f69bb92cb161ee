package io.erda.core.pm;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.nio.file.attribute.UserPrincipalNotFoundException;
import java.util.Set;

/**
 * Who may write a store's PM files (docs/ARCHITECTURE.md, "Security model"). The shm fabric lets a peer map these
 * files, and anyone who can write them can corrupt the store, so they belong to the user that runs the server and
 * nobody else may write them, except the members of one group if the server is given one.
 *
 * <p>The directory carries the policy. A store directory is made {@code 0700}, or, for a group, {@code 2770} with
 * that group (setgid, so whatever is created in it gets the group too). A PM file is created {@code 0600}, or
 * {@code 0660} with the directory's group if the directory is group-writable (which only passes the checks when that
 * group was configured). Modes are set explicitly after creation, so the umask changes nothing.
 *
 * <p>Opening refuses, naming path, mode and owner: a directory or file that another user owns; one that is
 * world-writable; a group-writable directory unless a group was configured and it is the directory's; a
 * group-writable file unless its directory is group-writable and of the same group.
 */
public final class PmFileModes {
    private static final Set<PosixFilePermission> OWNER_FILE = PosixFilePermissions.fromString("rw-------");
    private static final Set<PosixFilePermission> GROUP_FILE = PosixFilePermissions.fromString("rw-rw----");
    private static final Set<PosixFilePermission> OWNER_DIR = PosixFilePermissions.fromString("rwx------");

    private PmFileModes() {
    }

    /**
     * Gives the directory of a new store its mode: {@code 0700}, or {@code 2770} owned by {@code group} (null: none);
     * creates it (and missing parents) if it does not exist.
     */
    public static void prepareDirectory(Path dir, String group) {
        try {
            if (!Files.isDirectory(dir)) {
                Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(OWNER_DIR));
            }
            PosixFileAttributeView view = Files.getFileAttributeView(dir, PosixFileAttributeView.class);
            if (group == null) {
                view.setPermissions(OWNER_DIR);
            } else {
                view.setGroup(lookupGroup(group));
                view.setPermissions(PosixFilePermissions.fromString("rwxrwx---"));
                Files.setAttribute(dir, "unix:mode", 02770); // the setgid bit has no PosixFilePermission
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot prepare store directory " + dir, e);
        }
    }

    /** Refuses a store directory another user could write (see the class comment); {@code group} null: none configured. */
    public static void checkDirectory(Path dir, String group) {
        PosixFileAttributes a = attributes(dir);
        checkOwnerAndWorld(dir, a);
        if (a.permissions().contains(PosixFilePermission.GROUP_WRITE)
                && (group == null || !a.group().getName().equals(group))) {
            throw refused(dir, a, group == null
                    ? "its group " + a.group().getName() + " may write it and the server was given no group (--group)"
                    : "its group " + a.group().getName() + " may write it, not the configured group " + group);
        }
    }

    /** Refuses a PM file another user could write (see the class comment). */
    public static void checkFile(Path file) {
        PosixFileAttributes a = attributes(file);
        checkOwnerAndWorld(file, a);
        if (a.permissions().contains(PosixFilePermission.GROUP_WRITE)) {
            Path dir = file.toAbsolutePath().getParent();
            PosixFileAttributes d = attributes(dir);
            if (!d.permissions().contains(PosixFilePermission.GROUP_WRITE) || !d.group().equals(a.group())) {
                throw refused(file, a, "its group " + a.group().getName() + " may write it, and its directory " + dir
                        + " (" + describe(d) + ") is not shared with that group");
            }
        }
    }

    /** Gives a file just created its mode: {@code 0600}, or {@code 0660} with its directory's group if that is group-writable. */
    static void restrictNew(Path file) throws IOException {
        PosixFileAttributeView view = Files.getFileAttributeView(file, PosixFileAttributeView.class);
        PosixFileAttributes dir = attributes(file.toAbsolutePath().getParent());
        if (dir.permissions().contains(PosixFilePermission.GROUP_WRITE)) {
            view.setGroup(dir.group());
            view.setPermissions(GROUP_FILE);
        } else {
            view.setPermissions(OWNER_FILE);
        }
    }

    private static void checkOwnerAndWorld(Path path, PosixFileAttributes a) {
        UserPrincipal me = currentUser();
        if (!a.owner().equals(me)) {
            throw refused(path, a, "it belongs to " + a.owner().getName() + ", not to " + me.getName()
                    + ", who runs this");
        }
        if (a.permissions().contains(PosixFilePermission.OTHERS_WRITE)) {
            throw refused(path, a, "every user may write it");
        }
    }

    private static PmPermissionException refused(Path path, PosixFileAttributes a, String why) {
        return new PmPermissionException("refusing " + path + " (" + describe(a) + "): " + why
                + "; anyone who can write a PM file can corrupt the store (chmod go-w, chown, or --group)");
    }

    private static String describe(PosixFileAttributes a) {
        return "mode " + PosixFilePermissions.toString(a.permissions()) + ", owner " + a.owner().getName() + ", group "
                + a.group().getName();
    }

    private static PosixFileAttributes attributes(Path path) {
        try {
            return Files.readAttributes(path, PosixFileAttributes.class);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the owner and mode of " + path, e);
        }
    }

    private static UserPrincipal currentUser() {
        String name = System.getProperty("user.name");
        try {
            return FileSystems.getDefault().getUserPrincipalLookupService().lookupPrincipalByName(name);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot look up the user " + name + " this process runs as", e);
        }
    }

    /** The group of that name; an {@link IllegalArgumentException} naming it if there is none. */
    public static GroupPrincipal lookupGroup(String name) {
        try {
            return FileSystems.getDefault().getUserPrincipalLookupService().lookupPrincipalByGroupName(name);
        } catch (UserPrincipalNotFoundException e) {
            throw new IllegalArgumentException("group " + name + " does not exist");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot look up group " + name, e);
        }
    }
}
