package io.erda.fabric.tcp;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assumptions;

/**
 * A Linux network namespace joined to this one by a veth pair, so that a child process on the other side is a peer
 * on another host as far as TCP is concerned, and the link between them can really be cut. Made with {@code ip}
 * (Debian package iproute2, which .ci/run installs; without it the test fails), which needs root: without root the
 * test is skipped saying so (CI runs as root). Each instance has a /30 of 10.213.0.0/16 and interface names derived from this
 * process's pid, so parallel test JVMs do not collide.
 */
final class NetworkNamespace implements AutoCloseable {
    private static final AtomicInteger COUNT = new AtomicInteger();

    private final String name;
    private final String hostInterface;
    private final String hostAddress;
    private final String peerAddress;

    private NetworkNamespace(String name, String hostInterface, String hostAddress, String peerAddress) {
        this.name = name;
        this.hostInterface = hostInterface;
        this.hostAddress = hostAddress;
        this.peerAddress = peerAddress;
    }

    /**
     * Creates the namespace and link; fails without the ip command (a package .ci/run installs), and skips the calling
     * test, saying why, only where this process may not make a network namespace (not root, or no CAP_NET_ADMIN).
     */
    static NetworkNamespace createOrSkip() throws Exception {
        if (!Files.isExecutable(Path.of("/usr/sbin/ip")) && !Files.isExecutable(Path.of("/sbin/ip"))) {
            org.junit.jupiter.api.Assertions.fail("needs the ip command (Debian package iproute2; .ci/run installs it)"
                    + " to make a network namespace");
        }
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")),
                "needs root to make a network namespace (user is " + System.getProperty("user.name") + ")");
        long pid = ProcessHandle.current().pid();
        int n = COUNT.incrementAndGet();
        int block = (int) ((pid * 8 + n) % (1 << 14)); // a /30 of 10.213.0.0/16
        int base = block * 4;
        String host = "10.213." + (base >> 8) + "." + ((base & 0xff) + 1);
        String peer = "10.213." + (base >> 8) + "." + ((base & 0xff) + 2);
        String name = "erda-" + pid + "-" + n;
        String hostIf = "e" + pid + "h" + n;
        String peerIf = "e" + pid + "p" + n;
        Result created = run("ip", "netns", "add", name);
        Assumptions.assumeTrue(created.ok(), "cannot make a network namespace: " + created.output());
        NetworkNamespace ns = new NetworkNamespace(name, hostIf, host, peer);
        try {
            ns.must("ip", "link", "add", hostIf, "type", "veth", "peer", "name", peerIf);
            ns.must("ip", "link", "set", peerIf, "netns", name);
            ns.must("ip", "addr", "add", host + "/30", "dev", hostIf);
            ns.must("ip", "link", "set", hostIf, "up");
            ns.must("ip", "netns", "exec", name, "ip", "addr", "add", peer + "/30", "dev", peerIf);
            ns.must("ip", "netns", "exec", name, "ip", "link", "set", peerIf, "up");
            ns.must("ip", "netns", "exec", name, "ip", "link", "set", "lo", "up");
            return ns;
        } catch (Exception e) {
            ns.close();
            throw e;
        }
    }

    /** This side's address on the link. */
    String hostAddress() {
        return hostAddress;
    }

    /** The namespace's address on the link. */
    String peerAddress() {
        return peerAddress;
    }

    /** Starts {@code command} inside the namespace. */
    ProcessBuilder inside(List<String> command) {
        List<String> all = new ArrayList<>(List.of("ip", "netns", "exec", name));
        all.addAll(command);
        return new ProcessBuilder(all);
    }

    /** Cuts the link: this side's end goes down, so nothing crosses either way and nobody is told (no RST, no ICMP). */
    void cut() throws Exception {
        must("ip", "link", "set", hostInterface, "down");
    }

    /** The namespace drops every packet it would send to this side: SYNs arrive, nothing comes back. */
    void blackholeReplies() throws Exception {
        must("ip", "netns", "exec", name, "ip", "route", "add", "blackhole", hostAddress + "/32");
    }

    @Override
    public void close() throws Exception {
        run("ip", "link", "del", hostInterface); // takes the namespace's end with it
        run("ip", "netns", "del", name);
    }

    private void must(String... command) throws Exception {
        Result r = run(command);
        if (!r.ok()) {
            throw new IllegalStateException(String.join(" ", command) + " failed: " + r.output());
        }
    }

    private record Result(boolean ok, String output) {
    }

    private static Result run(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        boolean exited = p.waitFor(30, TimeUnit.SECONDS);
        return new Result(exited && p.exitValue() == 0, out);
    }
}
