package io.erda.fabric.shm;

import io.erda.fabric.FabricException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.Comparator;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * An instance's home directory and its life: claimed with a lock file, deleted on close or at JVM exit, and
 * collected by a later process if its owner died without either.
 *
 * <p><b>Ownership.</b> A home is named {@code <pid>-<n>} (under a listen or connect directory) or
 * {@code erda-shm-<pid>-<n>} (under {@code /dev/shm}), and holds {@value #LOCK_FILE}, locked with
 * {@link FileChannel#lock()} (an fcntl record lock) for as long as the fabric is open. The kernel drops that lock when
 * the process dies however it dies, so "its lock can be taken" means "its owner is gone", whatever happened to the
 * pid since: a reused pid does not fool it.
 *
 * <p><b>Clean exit.</b> {@link ShmFabric#close()} deletes the home. A JVM that exits without closing its fabric
 * deletes it in a shutdown hook (one per JVM, over every open home), as it does a listener's socket file.
 *
 * <p><b>Crash.</b> Every {@link ShmFabric} that opens collects stale homes under {@code /dev/shm} (or the temporary
 * directory), and under each directory it listens on or connects to, before it creates its own there: a home of
 * another process whose lock it can take is deleted (while it holds that lock); the owner creates its lock file
 * locked, under another name, and renames it into place, so a lock file is never seen unlocked while its owner lives.
 * A home without a lock file (its owner died between creating the directory and the rename) is deleted only if its
 * pid is dead, or was reused by a process
 * that started after the directory was last modified. Homes of this process are never touched: a second lock on a file
 * this JVM has locked would throw, and closing a second channel to it would drop the first lock.
 */
final class ShmHome {
    static final String LOCK_FILE = "lock";
    /** Prefix of a home under {@code /dev/shm}. */
    static final String DEFAULT_PREFIX = "erda-shm-";
    private static final Pattern HOME_NAME = Pattern.compile("(?:" + DEFAULT_PREFIX + ")?(\\d+)-\\d+");
    private static final long OWN_PID = ProcessHandle.current().pid();
    private static final Set<ShmFabric> OPEN = ConcurrentHashMap.newKeySet();
    private static volatile boolean hookInstalled;

    private ShmHome() {
    }

    /** The name of this process's {@code n}th home: {@code pid-n}, with the default prefix if not under a directory of its own. */
    static String name(boolean prefixed, int n) {
        return (prefixed ? DEFAULT_PREFIX : "") + OWN_PID + "-" + n;
    }

    /**
     * Creates {@code home} (a stale one of that name, left by a dead process whose pid this one reuses, is collected
     * first; a {@code configured} one may exist), then creates and locks its lock file; the caller keeps the returned
     * lock until it deletes the home.
     */
    static FileLock claim(Path home, boolean configured, ShmFiles files) throws IOException {
        if (configured) {
            files.createDirectories(home);
        } else {
            try {
                files.createDirectory(home);
            } catch (FileAlreadyExistsException e) {
                if (!collectIfStale(home, true)) {
                    throw new FabricException("shm home " + home + " exists and is in use by another live process");
                }
                files.createDirectory(home);
            }
        }
        Path lockFile = home.resolve(LOCK_FILE);
        boolean exists = Files.exists(lockFile);
        // A new lock file is created and locked under another name, then renamed into place: a collector that finds
        // LOCK_FILE must find it locked. Created under its own name, it was unlocked for a moment, and a collector
        // that took it then deleted a live home (the campaign's server restart failed: "NoSuchFileException:
        // .../counters"). A crash before the rename leaves no LOCK_FILE: collected once the pid is dead.
        Path created = exists ? lockFile : home.resolve(LOCK_FILE + ".new");
        FileChannel channel = exists ? FileChannel.open(lockFile, StandardOpenOption.WRITE) : files.createFile(created);
        try {
            FileLock lock = channel.tryLock();
            if (lock == null) {
                throw new FabricException("shm home " + home + " is in use by another live process (it holds "
                        + lockFile + " locked)");
            }
            if (!exists) {
                Files.move(created, lockFile, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            }
            return lock;
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    /** Deletes the home, then releases its lock (a collector that gets the lock meanwhile finds nothing to keep). */
    static void delete(Path home, FileLock lock) {
        deleteTree(home);
        if (lock != null) {
            try {
                lock.channel().close(); // releases the lock
            } catch (IOException e) {
                // the lock dies with the process anyway
            }
        }
    }

    /** Collects the stale homes among the entries of {@code dir} (those of other processes whose owner is gone). */
    static int collectStale(Path dir) {
        int collected = 0;
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path entry : entries) {
                if (HOME_NAME.matcher(entry.getFileName().toString()).matches() && collectIfStale(entry, false)) {
                    collected++;
                }
            }
        } catch (IOException | RuntimeException e) {
            // best effort: a directory we cannot list holds nothing we could delete either
        }
        return collected;
    }

    /**
     * Deletes {@code home} if no live process owns it; true if it is gone. {@code ownPidToo}: the caller is about to
     * create this very name, so a home named with this process's pid can only be a dead predecessor's.
     */
    private static boolean collectIfStale(Path home, boolean ownPidToo) {
        Matcher m = HOME_NAME.matcher(home.getFileName().toString());
        if (!m.matches() || !Files.isDirectory(home)) {
            return !Files.exists(home);
        }
        long pid = Long.parseLong(m.group(1));
        if (pid == OWN_PID && !ownPidToo) {
            return false;
        }
        Path lockFile = home.resolve(LOCK_FILE);
        if (!Files.exists(lockFile)) {
            if (ownerMayLive(pid, home)) {
                return false;
            }
            deleteTree(home);
            return true;
        }
        try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.WRITE)) {
            FileLock lock = channel.tryLock();
            if (lock == null) {
                return false; // its owner lives
            }
            deleteTree(home);
            return true;
        } catch (NoSuchFileException e) {
            return !Files.exists(home); // another collector was faster
        } catch (IOException | OverlappingFileLockException e) {
            return false; // not ours to open (another user's), or this JVM's own
        }
    }

    /** For a home without a lock file: is the process of its pid alive and older than the home? */
    private static boolean ownerMayLive(long pid, Path home) {
        var process = ProcessHandle.of(pid);
        if (process.isEmpty() || !process.get().isAlive()) {
            return false;
        }
        Instant started = process.get().info().startInstant().orElse(Instant.MIN);
        try {
            Instant modified = Files.getLastModifiedTime(home).toInstant();
            return !started.isAfter(modified.plusSeconds(1)); // a pid reused since would have started later
        } catch (IOException e) {
            return true;
        }
    }

    static void deleteTree(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException | RuntimeException e) {
            // best effort: gone already, or collected by the next process that opens the shm fabric
        }
    }

    // ------------------------------------------------------------------ JVM exit without close

    /** Registers an open fabric whose files the shutdown hook deletes if the JVM exits before it is closed. */
    static void opened(ShmFabric fabric) {
        if (!hookInstalled) {
            synchronized (ShmHome.class) {
                if (!hookInstalled) {
                    Runtime.getRuntime().addShutdownHook(new Thread(ShmHome::atExit, "erda-shm-exit"));
                    hookInstalled = true;
                }
            }
        }
        OPEN.add(fabric);
    }

    static void closed(ShmFabric fabric) {
        OPEN.remove(fabric);
    }

    private static void atExit() {
        for (ShmFabric fabric : OPEN) {
            fabric.deleteFilesAtExit();
        }
    }
}
