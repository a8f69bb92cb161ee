package io.erda.bench.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The network of a {@link ClusterNemesis} run: one Linux network namespace per host (each member, ZooKeeper), each
 * joined to this (the root) namespace by a veth pair, with a default route through it, and forwarding on here, so
 * every namespace reaches every other through the root namespace, where the nemesis's clients run. Each link is a /30
 * of 10.213.0.0/16 (as the fabric tests' {@code NetworkNamespace}, whose blocks are {@code pid * 8 + n} for n &ge; 1;
 * these are {@code (pid * 4 + i) * 8}, multiples of 8, so the two do not collide while a test makes fewer than 8).
 *
 * <p>A link between two hosts is cut by a rule in each namespace that drops every packet arriving from the other
 * ({@code ip rule add from ADDR blackhole}, ahead of the local table, which is moved behind it): nothing crosses
 * either way and nobody is told, as on a real partition; every other link stays up. A host is cut from this namespace
 * (the clients) the same way, plus a blackhole route for its replies. Rules live in the namespaces, so deleting them
 * removes every cut. Needs root and {@code ip} (iproute2). Names carry this process's pid ({@code erda-nem-PID-HOST});
 * namespaces of runs whose process is gone (killed before cleaning up) are deleted by {@link #create}, and the
 * processes left in them killed.
 */
final class NemesisNetwork implements AutoCloseable {
    static final String PREFIX = "erda-nem-";
    private static final Pattern NAME = Pattern.compile(Pattern.quote(PREFIX) + "(\\d+)-.*");
    private static final Path FORWARDING = Path.of("/proc/sys/net/ipv4/ip_forward");
    private static final Path ETC_NETNS = Path.of("/etc/netns");
    private static final int CUT_PRIORITY = 10;

    /** One namespace: its name, its address, and this namespace's address on its link. */
    record Host(String name, String namespace, String address, String rootAddress) {
    }

    private final Map<String, Host> hosts = new LinkedHashMap<>();
    private final Set<List<String>> cuts = new LinkedHashSet<>();
    private String forwardingBefore;

    private NemesisNetwork() {
    }

    /** Fails saying why unless this process may make network namespaces (root, and the ip command). */
    static void requireRootAndIp() {
        if (!Files.isExecutable(Path.of("/usr/sbin/ip")) && !Files.isExecutable(Path.of("/sbin/ip"))) {
            throw new IllegalStateException("the nemesis needs the ip command (Debian package iproute2) to make network "
                    + "namespaces for its partitions");
        }
        if (!"root".equals(System.getProperty("user.name"))) {
            throw new IllegalStateException("the nemesis needs root to make network namespaces for its partitions (user "
                    + "is " + System.getProperty("user.name") + "); CI runs as root");
        }
    }

    /** A namespace for each of {@code names}, linked to this one; stale namespaces of dead runs are deleted first. */
    static NemesisNetwork create(List<String> names) throws Exception {
        requireRootAndIp();
        deleteStale();
        long pid = ProcessHandle.current().pid();
        NemesisNetwork network = new NemesisNetwork();
        try {
            network.forwardingBefore = Files.readString(FORWARDING).strip();
            Files.writeString(FORWARDING, "1");
            for (int i = 0; i < names.size(); i++) {
                network.add(pid, i, names.get(i));
            }
            return network;
        } catch (Exception e) {
            network.close();
            throw e;
        }
    }

    private void add(long pid, int i, String name) throws Exception {
        int base = (int) (((pid * 4 + i) * 8) % (1 << 14)) * 4;
        String root = "10.213." + (base >> 8) + "." + ((base & 0xff) + 1);
        String address = "10.213." + (base >> 8) + "." + ((base & 0xff) + 2);
        String namespace = PREFIX + pid + "-" + name;
        String rootIf = "en" + pid + "r" + i;
        String hostIf = "en" + pid + "h" + i;
        must("ip", "netns", "add", namespace);
        hosts.put(name, new Host(name, namespace, address, root));
        // ip netns exec mounts /etc/netns/NS/resolv.conf over /etc/resolv.conf: the machine's name server is not
        // reachable from a namespace (its packets leave by the root namespace unmasqueraded), and a member's ZooKeeper
        // client, looking an address up, waited 5 s per try for it and gave up connecting
        Path etc = Files.createDirectories(ETC_NETNS.resolve(namespace));
        Files.writeString(etc.resolve("resolv.conf"), "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n");
        must("ip", "link", "add", rootIf, "type", "veth", "peer", "name", hostIf);
        must("ip", "link", "set", hostIf, "netns", namespace);
        must("ip", "addr", "add", root + "/30", "dev", rootIf);
        must("ip", "link", "set", rootIf, "up");
        must("ip", "-n", namespace, "addr", "add", address + "/30", "dev", hostIf);
        must("ip", "-n", namespace, "link", "set", hostIf, "up");
        must("ip", "-n", namespace, "link", "set", "lo", "up");
        must("ip", "-n", namespace, "route", "add", "default", "via", root);
        // the local table is looked up first (priority 0) and would deliver a packet before any cut could drop it
        must("ip", "-n", namespace, "rule", "add", "priority", "100", "lookup", "local");
        must("ip", "-n", namespace, "rule", "del", "priority", "0");
    }

    Host host(String name) {
        Host h = hosts.get(name);
        if (h == null) {
            throw new IllegalArgumentException("no host " + name + " in " + hosts.keySet());
        }
        return h;
    }

    /** The command prefix that runs a command inside {@code name}'s namespace (it execs it: the pid is the command's). */
    List<String> launcher(String name) {
        return List.of("ip", "netns", "exec", host(name).namespace());
    }

    /** Cuts the link between hosts {@code a} and {@code b} both ways; false if it is cut already. */
    synchronized boolean cut(String a, String b) throws Exception {
        if (!cuts.add(pair(a, b))) {
            return false;
        }
        dropFrom(host(a), host(b).address(), "add");
        dropFrom(host(b), host(a).address(), "add");
        return true;
    }

    synchronized void heal(String a, String b) throws Exception {
        if (cuts.remove(pair(a, b))) {
            dropFrom(host(a), host(b).address(), "del");
            dropFrom(host(b), host(a).address(), "del");
        }
    }

    /** Cuts host {@code name} from this namespace (the clients) both ways; false if it is cut already. */
    synchronized boolean cutFromRoot(String name) throws Exception {
        if (!cuts.add(List.of(name))) {
            return false;
        }
        Host h = host(name);
        dropFrom(h, h.rootAddress(), "add");
        must("ip", "-n", h.namespace(), "route", "add", "blackhole", h.rootAddress() + "/32");
        return true;
    }

    synchronized void healFromRoot(String name) throws Exception {
        if (cuts.remove(List.of(name))) {
            Host h = host(name);
            dropFrom(h, h.rootAddress(), "del");
            must("ip", "-n", h.namespace(), "route", "del", "blackhole", h.rootAddress() + "/32");
        }
    }

    /** Heals every cut. */
    synchronized void healAll() throws Exception {
        for (List<String> c : new ArrayList<>(cuts)) {
            if (c.size() == 1) {
                healFromRoot(c.getFirst());
            } else {
                heal(c.get(0), c.get(1));
            }
        }
    }

    private static List<String> pair(String a, String b) {
        return a.compareTo(b) < 0 ? List.of(a, b) : List.of(b, a);
    }

    private static void dropFrom(Host in, String from, String addOrDel) throws Exception {
        must("ip", "-n", in.namespace(), "rule", addOrDel, "priority", String.valueOf(CUT_PRIORITY), "from", from,
                "blackhole");
    }

    /** Deletes every namespace (their veth pairs go with them) and restores forwarding. */
    @Override
    public synchronized void close() throws Exception {
        for (Host h : hosts.values()) {
            delete(h.namespace());
        }
        hosts.clear();
        cuts.clear();
        if (forwardingBefore != null) {
            Files.writeString(FORWARDING, forwardingBefore);
            forwardingBefore = null;
        }
    }

    /** Namespaces of earlier runs whose process is gone, and what still runs in them. */
    static void deleteStale() throws Exception {
        Set<String> names = new LinkedHashSet<>();
        for (String line : run("ip", "netns", "list").output().split("\n")) {
            names.add(line.strip().split(" ")[0]);
        }
        if (Files.isDirectory(ETC_NETNS)) {
            try (var dirs = Files.list(ETC_NETNS)) {
                dirs.forEach(d -> names.add(d.getFileName().toString()));
            }
        }
        for (String name : names) {
            Matcher m = NAME.matcher(name);
            if (m.matches() && ProcessHandle.of(Long.parseLong(m.group(1))).isEmpty()) {
                System.out.println("nemesis: deleting namespace " + name + " of a run that is gone, and its processes");
                for (String pid : run("ip", "netns", "pids", name).output().split("\\s+")) {
                    if (!pid.isBlank() && pid.chars().allMatch(Character::isDigit)) {
                        ProcessHandle.of(Long.parseLong(pid)).ifPresent(ProcessHandle::destroyForcibly);
                    }
                }
                delete(name);
            }
        }
    }

    private static void delete(String namespace) throws Exception {
        run("ip", "netns", "del", namespace);
        Path etc = ETC_NETNS.resolve(namespace);
        Files.deleteIfExists(etc.resolve("resolv.conf"));
        Files.deleteIfExists(etc);
    }

    private static void must(String... command) throws Exception {
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
