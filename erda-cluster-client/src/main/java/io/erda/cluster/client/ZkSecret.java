package io.erda.cluster.client;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.security.NoSuchAlgorithmException;
import java.util.List;
import java.util.Set;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;

/**
 * The secret that makes a process a member of a cluster ([cluster], "Security"): with it a member authenticates to
 * ZooKeeper (the digest scheme, user {@value #USER}) and creates every node writable only by holders of the secret
 * and readable by anyone. So a process without it (a client: clients only read the map and the registrations) cannot
 * rewrite the map, register as a member, renew a lease or stand as coordinator. A cluster whose nodes were made
 * before it had a secret is locked by its first member that has one ({@link #lock}).
 */
public final class ZkSecret {
    static final String SCHEME = "digest";
    static final String USER = "erda";
    /** The environment variable a member reads the secret from when no file is given. */
    public static final String ENVIRONMENT = "ERDA_ZK_SECRET";

    private final String secret;

    private ZkSecret(String secret) {
        this.secret = secret;
    }

    /**
     * The secret in {@code file} (its first line), which only its owner may read or write: a secret others can read is
     * no secret, and is refused naming the file and its mode.
     */
    public static ZkSecret fromFile(Path file) {
        try {
            return read(file);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read ZooKeeper secret file " + file + ": " + e, e);
        }
    }

    private static ZkSecret read(Path file) throws IOException {
        Set<PosixFilePermission> mode = Files.getPosixFilePermissions(file);
        for (PosixFilePermission p : mode) {
            if (p.name().startsWith("GROUP") || p.name().startsWith("OTHERS")) {
                throw new IllegalArgumentException("ZooKeeper secret file " + file + " has mode "
                        + java.nio.file.attribute.PosixFilePermissions.toString(mode)
                        + ": others may read it; make it the owner's only (chmod 600)");
            }
        }
        return of(Files.readAllLines(file, StandardCharsets.UTF_8).stream().findFirst().orElse(""), file.toString());
    }

    /** The secret in environment variable {@value #ENVIRONMENT}, or null if it is not set. */
    public static ZkSecret fromEnvironment() {
        String value = System.getenv(ENVIRONMENT);
        return value == null ? null : of(value, "environment variable " + ENVIRONMENT);
    }

    private static ZkSecret of(String value, String where) {
        String s = value.strip();
        if (s.length() < 16) {
            throw new IllegalArgumentException("ZooKeeper secret in " + where + " has " + s.length()
                    + " characters; give at least 16");
        }
        return new ZkSecret(s);
    }

    /**
     * A key for {@code purpose} derived from the secret (HMAC-SHA256 of the purpose under the secret), so what members
     * sign to each other never uses the ZooKeeper credential itself.
     */
    public byte[] derivedKey(String purpose) {
        try {
            javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
            mac.init(new javax.crypto.spec.SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            return mac.doFinal(purpose.getBytes(StandardCharsets.UTF_8));
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException("the JDK has no HmacSHA256", e);
        }
    }

    byte[] credentials() {
        return (USER + ":" + secret).getBytes(StandardCharsets.UTF_8);
    }

    /** Writable (every permission) by holders of the secret, readable by anyone. */
    List<ACL> acl() {
        try {
            Id members = new Id(SCHEME, DigestAuthenticationProvider.generateDigest(USER + ":" + secret));
            // a mutable list: ZooKeeper's validateACL asks contains(null), which List.of answers with an NPE
            return new java.util.ArrayList<>(List.of(new ACL(ZooDefs.Perms.ALL, members),
                    new ACL(ZooDefs.Perms.READ, ZooDefs.Ids.ANYONE_ID_UNSAFE)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("ZooKeeper's digest needs SHA-1", e);
        }
    }

    ACLProvider aclProvider() {
        List<ACL> acl = acl();
        return new ACLProvider() {
            @Override
            public List<ACL> getDefaultAcl() {
                return acl;
            }

            @Override
            public List<ACL> getAclForPath(String path) {
                return acl;
            }
        };
    }

    /**
     * Sets this secret's ACL on the cluster's own nodes that exist (its root and {@link Zk#SERVERS}, {@link Zk#MAP},
     * {@link Zk#COORDINATOR}, {@link Zk#LEASES}), creating the parents first: a cluster started open is locked by its
     * first member with a secret. Fails, naming the node, where the cluster is locked with another secret.
     */
    public void lock(CuratorFramework zk) throws Exception {
        List<ACL> acl = acl();
        for (String path : List.of(Zk.SERVERS, Zk.COORDINATOR, Zk.LEASES, Zk.MAP, "/")) {
            try {
                if (!path.equals(Zk.MAP) && !path.equals("/") && zk.checkExists().forPath(path) == null) {
                    zk.create().creatingParentContainersIfNeeded().forPath(path);
                }
                if (zk.checkExists().forPath(path) != null && !zk.getACL().forPath(path).equals(acl)) {
                    zk.setACL().withACL(acl).forPath(path);
                }
            } catch (KeeperException.NodeExistsException raced) {
                // another member made it a moment ago, with the same ACL
            } catch (KeeperException.NoAuthException e) {
                throw new IllegalArgumentException("ZooKeeper refuses to let this member change " + path + ": the cluster"
                        + " is protected with another secret (--zk-secret-file or " + ENVIRONMENT + ")", e);
            }
        }
    }
}
