package io.erda.cluster;

import io.erda.cluster.client.ZkSecret;
import io.erda.protocol.PutRequest;
import io.erda.protocol.ReplicaSender;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Signs and checks the sender of a replica reservation ({@link ReplicaSender}; [cluster], "Security"). A primary
 * names the session the map knows it by and, in a cluster with a secret ({@link ZkSecret}), tags the request with an
 * HMAC-SHA256 (truncated to 16 bytes) over that session, the assignment, the flags, the value length and the key,
 * keyed by a key derived from the secret. A backup accepts the reservation only from the session its map names as
 * the shard's primary, and with a secret only with the right tag: a process that has the map (anyone may read it)
 * but not the secret cannot make a backup reserve, and a deposed primary is refused by its session.
 */
final class ReplicaTags {
    private static final String PURPOSE = "erda replica reservation v1";
    private final SecretKeySpec key;
    private final ThreadLocal<Mac> macs;

    /** Tags for a cluster with {@code secret}, or zero tags (the session alone is checked) for null. */
    ReplicaTags(ZkSecret secret) {
        this.key = secret == null ? null : new SecretKeySpec(secret.derivedKey(PURPOSE), "HmacSHA256");
        this.macs = ThreadLocal.withInitial(() -> {
            try {
                Mac mac = Mac.getInstance("HmacSHA256");
                if (key != null) {
                    mac.init(key);
                }
                return mac;
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("the JDK has no HmacSHA256", e);
            }
        });
    }

    /** The sender of a replica reservation of {@code key} forwarded by the primary registered under {@code session}. */
    ReplicaSender sign(long session, MemorySegment key, int valueLength, boolean delete, int assignment) {
        if (this.key == null) {
            return new ReplicaSender(session, 0, 0);
        }
        ByteBuffer tag = ByteBuffer.wrap(tag(session, key, valueLength, delete, assignment)).order(ByteOrder.LITTLE_ENDIAN);
        return new ReplicaSender(session, tag.getLong(0), tag.getLong(8));
    }

    /** Whether {@code request}'s tag is right (always, in a cluster without a secret). */
    boolean verify(PutRequest request) {
        if (key == null) {
            return true;
        }
        ReplicaSender sender = request.sender();
        byte[] expected = tag(sender.session(), request.key(), request.valueLength(), request.delete(),
                request.assignment());
        byte[] got = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putLong(sender.tagHigh())
                .putLong(sender.tagLow()).array();
        return MessageDigest.isEqual(expected, got);
    }

    private byte[] tag(long session, MemorySegment key, int valueLength, boolean delete, int assignment) {
        Mac mac = macs.get();
        mac.update(ByteBuffer.allocate(17).order(ByteOrder.LITTLE_ENDIAN).putLong(session).putInt(assignment)
                .putInt(valueLength).put((byte) (delete ? 1 : 0)).flip());
        mac.update(key.asByteBuffer());
        byte[] full = mac.doFinal();
        return java.util.Arrays.copyOf(full, 16);
    }
}
