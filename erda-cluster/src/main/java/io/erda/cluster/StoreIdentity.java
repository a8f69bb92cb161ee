package io.erda.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.regex.Pattern;

/**
 * The persistent identity of a cluster member's store ([cluster]): 128 random bits, as 32 hex digits in the file
 * {@value #FILE} of the store's directory, made when the store is made. A member publishes it in its registration and
 * the shard map records it, so the coordinator re-adopts a lost shard's last primary only on the very store that held
 * the shard: a wiped or replaced directory has a new store and so a new identity, which matches nothing recorded.
 *
 * <p>Made after the store, written and forced under a temporary name, renamed, and the directory forced before the
 * member registers it: a crash before that leaves a store without the file, which then gets a fresh identity (safe:
 * a fresh one matches nothing, and a store that never registered was never recorded). A file beside no store
 * (the store's files deleted, the file left) is replaced.
 */
final class StoreIdentity {
    static final String FILE = "cluster-store-id";
    private static final Pattern HEX128 = Pattern.compile("[0-9a-f]{32}");
    private static final SecureRandom RANDOM = new SecureRandom();

    private StoreIdentity() {
    }

    /**
     * The identity of the store in {@code directory}, just opened or created: a store that existed before it was
     * opened ({@code existed}: {@link io.erda.core.PmDirectory#exists} before the open) keeps the identity its file
     * holds; a new one, or one without the file, gets a new one.
     */
    static String establish(Path directory, boolean existed) {
        Path file = directory.resolve(FILE);
        try {
            if (existed && Files.exists(file)) {
                String id = Files.readString(file, StandardCharsets.US_ASCII).strip();
                if (!HEX128.matcher(id).matches()) {
                    throw new IllegalStateException(file + " holds '" + id + "', not a store identity (32 lowercase hex "
                            + "digits); delete it to give the store a new one (its lost shards are then not recovered "
                            + "from it)");
                }
                return id;
            }
            byte[] bits = new byte[16];
            RANDOM.nextBytes(bits);
            String id = HexFormat.of().formatHex(bits);
            Path temp = directory.resolve(FILE + ".new");
            Files.deleteIfExists(temp);
            Files.createFile(temp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            try (FileChannel channel = FileChannel.open(temp, StandardOpenOption.WRITE)) {
                channel.write(java.nio.ByteBuffer.wrap((id + "\n").getBytes(StandardCharsets.US_ASCII)));
                channel.force(true);
            }
            Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            // the name too, before the member registers the identity: a crash that lost the rename would bring the
            // store back with a fresh identity, and the shards it was last primary of would stay lost
            io.erda.core.pm.PmRegion.forceDirectory(file);
            return id;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read or write the store identity " + file, e);
        }
    }
}
