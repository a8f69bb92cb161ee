package io.erda.bench.cluster;

import io.erda.client.ClientOptions;
import io.erda.cluster.client.ClusterClient;
import io.erda.cluster.client.ShardMap;
import io.erda.cluster.harness.ClusterDemo;
import io.erda.cluster.harness.MemberProcess;
import io.erda.cluster.harness.ZkLink;
import io.erda.history.HistoryRecorder;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code scripts/cluster-nemesis} ([cluster], "Nemesis"): a nemesis test in the Jepsen tradition. A real ZooKeeper
 * (its own process, {@link ZooKeeperRun#process}) and three member processes, each in a network namespace of its own
 * ({@link NemesisNetwork}); writer and reader threads in this process ({@link NemesisLoad}) record every operation
 * through {@code zk://} clients, while a nemesis thread injects faults at random from the seed, several at once at
 * times: kill -9 of a member (restarted on its directory a little later), SIGSTOP of a member for longer than its
 * lease (then SIGCONT; a member whose lease ran out halts when it resumes, and is restarted), partitions (primary |
 * ZooKeeper, reader | ZooKeeper, primary | backup, client | primary; healed after a few seconds) and restarts of
 * ZooKeeper (every member halts once its lease cannot be renewed, and all are restarted on their stores). Rebalancing
 * moves are not injected: the coordinator makes them itself whenever a killed or halted member returns, so every
 * restart brings some under the same faults. Any member found dead and not meant to be is
 * restarted. At the end everything is healed and restarted, the cluster settles, every key is read once more, and the
 * {@link io.erda.history.LinearizabilityChecker} judges the whole history ({@link NemesisVerdict}). Exit 0 only when
 * it is linearizable, with no stale read and no lost write.
 *
 * <p>{@code --fabric shm}: the clients' READs are loads from the members' files, which a paused (or halted) member's
 * memory still answers, as an RNIC does; there the nemesis catches a missing fence that tcp hides (a paused tcp member
 * answers nothing). Clients and members, and members among themselves, then talk through files, not the network, so
 * the client | primary and primary | backup partitions are left out.
 *
 * <p>The seed fixes the schedule (which fault, on which role, for how long, when); the interleaving is the machine's.
 * Needs root and iproute2 for the namespaces.
 */
@Command(name = "cluster-nemesis", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Kills, pauses, partitions and ZooKeeper restarts against a 3-member cluster in network "
                + "namespaces while clients record every operation; checks the history for linearizability.")
public final class ClusterNemesis implements Callable<Integer> {
    @Option(names = "--minutes", defaultValue = "3", description = "Length of the fault schedule. Default: ${DEFAULT-VALUE}.")
    double minutes;

    @Option(names = "--seed", description = "Seed of the schedule (default: random, printed first).")
    Long seed;

    @Option(names = "--faults", split = ",", paramLabel = "KIND",
            description = "Fault kinds to inject (default all): kill, pause, primary-zookeeper, reader-zookeeper, "
                    + "primary-backup, client-primary, zookeeper-restart.")
    List<String> faultNames;

    @Option(names = "--fabric", defaultValue = "tcp", description = "tcp, or shm: clients' READs are then loads from "
            + "the members' mapped files, answered even by a paused member, and links between clients and members, and "
            + "between members, are no network links, so those two partitions are left out. Default: ${DEFAULT-VALUE}.")
    String fabric;

    @Option(names = "--member-lease-ms", defaultValue = "400", description = "The members' lease (their default); a "
            + "pause lasts 2 to 8 leases. Default: ${DEFAULT-VALUE}.")
    long memberLeaseMillis;

    @Option(names = "--keys", defaultValue = "12", description = "Keys. Default: ${DEFAULT-VALUE}.")
    int keys;

    @Option(names = "--writers", defaultValue = "3", description = "Writer threads. Default: ${DEFAULT-VALUE}.")
    int writers;

    @Option(names = "--readers", defaultValue = "4", description = "Reader threads; the even ones reach ZooKeeper "
            + "through a link the nemesis cuts. Default: ${DEFAULT-VALUE}.")
    int readers;

    @Option(names = "--rate", defaultValue = "40", description = "Operations per second per thread at most. "
            + "Default: ${DEFAULT-VALUE}.")
    int rate;

    @Option(names = "--pm-dir", defaultValue = "/dev/shm", description = "Where the members' stores go. "
            + "Default: ${DEFAULT-VALUE}.")
    Path pmBase;

    @Option(names = "--out", defaultValue = "target/cluster-nemesis",
            description = "History and logs go to OUT/seed-SEED. Default: ${DEFAULT-VALUE}.")
    Path outBase;

    /** The kinds of fault. */
    enum Fault {
        KILL("kill"), PAUSE("pause"), PRIMARY_ZOOKEEPER("primary-zookeeper"), READER_ZOOKEEPER("reader-zookeeper"),
        PRIMARY_BACKUP("primary-backup"), CLIENT_PRIMARY("client-primary"), ZOOKEEPER_RESTART("zookeeper-restart");

        final String option;

        Fault(String option) {
            this.option = option;
        }

        static Fault of(String option) {
            return Arrays.stream(values()).filter(f -> f.option.equals(option)).findFirst().orElseThrow(() ->
                    new IllegalArgumentException("fault '" + option + "' is none of " + Arrays.stream(values())
                            .map(f -> f.option).toList()));
        }
    }

    static final int MEMBERS = 3;
    static final int SHARDS = 4;
    private static final int ZOOKEEPER_PORT = 2181;
    private static final Duration OPERATION_TIMEOUT = Duration.ofMillis(2500);
    private static final Duration PROGRESS = Duration.ofSeconds(5);
    private static final Duration SETTLE = Duration.ofSeconds(120);
    /**
     * The members' JVM: C1 only and the serial collector, so that three of them, ZooKeeper and the clients on two
     * cores leave each other time to renew their leases (the JVM takes the variable; env execs java, so the pid the
     * nemesis signals is still the member's).
     */
    private static final List<String> MEMBER_JVM = List.of("env",
            "JAVA_TOOL_OPTIONS=-XX:TieredStopAtLevel=1 -XX:+UseSerialGC");
    /** The nemesis's own process number in the history: its notes. */
    private static final int NEMESIS = -1;

    /** How many of each member's lines a failure to settle prints. */
    private static final int LAST_LINES = 12;

    /** A member slot: the process of its current incarnation and what the nemesis did to it. */
    private static final class Member {
        final int id;
        volatile MemberProcess process;
        volatile boolean paused;
        /** System.nanoTime() before which a killed member stays down. */
        volatile long downUntil;
        final AtomicBoolean restarting = new AtomicBoolean();
        int incarnation;

        Member(int id) {
            this.id = id;
        }

        String host() {
            return "m" + id;
        }

        boolean up() {
            MemberProcess p = process;
            return p != null && p.alive() && !paused && !restarting.get();
        }
    }

    private Random random;
    private Path out;
    private Path stores;
    private NemesisNetwork network;
    private ZooKeeperRun zookeeper;
    private URI zk;
    private ZkLink link;
    private ClusterClient writing;
    private ClusterClient reading;
    private HistoryRecorder history;
    private final Member[] members = IntStream.rangeClosed(1, MEMBERS).mapToObj(Member::new).toArray(Member[]::new);
    private final ScheduledExecutorService undo = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().name("nemesis-undo").daemon().factory());
    /** What is being done to the cluster now, for the progress lines. */
    private final Set<String> current = ConcurrentHashMap.newKeySet();
    private final AtomicLong kills = new AtomicLong();
    private final AtomicLong pauses = new AtomicLong();
    private final AtomicLong zookeeperRestarts = new AtomicLong();
    private final Map<Fault, AtomicLong> injected = new ConcurrentHashMap<>();
    private final List<String> problems = Collections.synchronizedList(new ArrayList<>());
    private final AtomicBoolean cleanedUp = new AtomicBoolean();
    private volatile boolean zookeeperDown;

    /** The clients' ZooKeeper connections time out and expire on purpose here: their warnings are noise. */
    private static final java.util.logging.Logger ZOOKEEPER_CLIENT = java.util.logging.Logger.getLogger(
            "org.apache.zookeeper");

    public static void main(String[] args) {
        ClusterYcsbDemo.quietZooKeeper();
        ZOOKEEPER_CLIENT.setLevel(java.util.logging.Level.SEVERE);
        System.exit(new CommandLine(new ClusterNemesis()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        NemesisNetwork.requireRootAndIp();
        long s = seed != null ? seed : new Random().nextLong() & Long.MAX_VALUE;
        random = new Random(s);
        if (!fabric.equals("tcp") && !fabric.equals("shm")) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--fabric '" + fabric + "' is not tcp or shm");
        }
        List<Fault> kinds = (faultNames == null ? Arrays.stream(Fault.values()) : faultNames.stream().map(Fault::of))
                .distinct().filter(f -> fabric.equals("tcp") || f != Fault.PRIMARY_BACKUP && f != Fault.CLIENT_PRIMARY)
                .toList();
        out = outBase.resolve("seed-" + s).toAbsolutePath();
        ClusterDemo.deleteTree(out);
        Files.createDirectories(out);
        stores = pmBase.resolve("erda-nemesis-" + ProcessHandle.current().pid());
        System.out.printf(Locale.ROOT, "nemesis: seed %d, %.1f min, faults %s (and the rebalancing moves "
                + "each return brings), %d members x %d shards on %s (member lease %d ms), %d writers and %d readers on "
                + "%d keys; history and logs in %s%n", s, minutes, kinds.stream().map(f -> f.option).toList(), MEMBERS,
                SHARDS, fabric, memberLeaseMillis, writers, readers, keys, out);
        Thread hook = new Thread(this::cleanUp, "nemesis-cleanup");
        Runtime.getRuntime().addShutdownHook(hook);
        NemesisVerdict verdict;
        try {
            startCluster();
            history = HistoryRecorder.appendingTo(out.resolve("nemesis.history"));
            NemesisLoad load = new NemesisLoad(history, writing, reading, writers, readers, keys, rate, random.nextLong());
            load.start();
            try {
                runSchedule(kinds, load);
            } finally {
                // the heals and resumes already scheduled run to their end (shutdown, not shutdownNow: an interrupted
                // heal has dropped its cut from NemesisNetwork's list but not from the kernel, so settle() would not
                // heal it); the periodic restarts stop
                undo.shutdown();
                if (!undo.awaitTermination(30, TimeUnit.SECONDS)) {
                    undo.shutdownNow();
                    problems.add("the nemesis's heals and resumes did not end within 30 s of the schedule's end");
                }
                load.close();
            }
            settle();
            readBack(load);
            history.close();
            verdict = NemesisVerdict.judge(history.history(), new NemesisVerdict.Faults(kills.get(), pauses.get(),
                    partitions(), zookeeperRestarts.get()), problems);
        } finally {
            cleanUp();
            Runtime.getRuntime().removeShutdownHook(hook);
        }
        verdict.details().forEach(d -> System.out.println("  " + d));
        System.out.printf(Locale.ROOT, "nemesis: zookeeper restarts %d; partitions primary|zookeeper %d, "
                + "reader|zookeeper %d, primary|backup %d, client|primary %d; history %s, logs %s%n",
                zookeeperRestarts.get(), count(Fault.PRIMARY_ZOOKEEPER), count(Fault.READER_ZOOKEEPER),
                count(Fault.PRIMARY_BACKUP), count(Fault.CLIENT_PRIMARY), out.resolve("nemesis.history"), out);
        System.out.println(verdict.line());
        return verdict.exitCode();
    }

    // ------------------------------------------------------------------ the cluster

    private void startCluster() throws Exception {
        deleteStaleStores();
        Files.createDirectories(stores);
        List<String> hosts = new ArrayList<>(List.of("zk"));
        Arrays.stream(members).forEach(m -> hosts.add(m.host()));
        network = NemesisNetwork.create(hosts);
        String zkAddress = network.host("zk").address();
        zookeeper = ZooKeeperRun.process(network.launcher("zk"), zkAddress, ZOOKEEPER_PORT,
                Files.createDirectories(stores.resolve("zookeeper")), out.resolve("zookeeper.log"));
        zk = zookeeper.uri();
        System.out.println("nemesis: ZooKeeper " + zookeeper.description() + " at " + zk);
        // one at a time, and again if one halted: three JVMs starting at once on two cores kept a member from
        // renewing its lease in time
        for (int attempt = 1; !Arrays.stream(members).allMatch(Member::up); attempt++) {
            if (attempt > 3) {
                throw new IllegalStateException("the members did not all start in 3 attempts; see the logs in " + out);
            }
            for (Member m : members) {
                if (!m.up()) {
                    m.process = startMember(m);
                }
            }
        }
        writing = ClusterClient.connect(ClientOptions.of(zk).withOperationTimeout(OPERATION_TIMEOUT)
                .withPoolSize(writers + readers));
        undo.scheduleWithFixedDelay(this::restartDeadMembers, 250, 250, TimeUnit.MILLISECONDS);
        writing.awaitMap(m -> settled(m) && m.servers().size() == MEMBERS, Duration.ofSeconds(90));
        link = new ZkLink(zkAddress, ZOOKEEPER_PORT);
        reading = ClusterClient.connect(ClientOptions.of(URI.create("zk://127.0.0.1:" + link.port() + "/erda"))
                .withOperationTimeout(OPERATION_TIMEOUT).withPoolSize(readers));
        System.out.println("nemesis: cluster up, map " + writing.shardMap());
    }

    /** The stores of earlier runs whose process is gone (killed before cleaning up). */
    private void deleteStaleStores() throws Exception {
        try (var dirs = Files.list(pmBase)) {
            for (Path d : dirs.toList()) {
                String name = d.getFileName().toString();
                if (name.matches("erda-nemesis-\\d+") && ProcessHandle.of(Long.parseLong(
                        name.substring("erda-nemesis-".length()))).isEmpty()) {
                    System.out.println("nemesis: deleting " + d + " of a run that is gone");
                    ClusterDemo.deleteTree(d);
                }
            }
        }
    }

    private MemberProcess startMember(Member m) {
        Path log = out.resolve("member-" + m.id + "-" + m.incarnation++ + ".log");
        try {
            List<String> launcher = new ArrayList<>(network.launcher(m.host()));
            launcher.addAll(MEMBER_JVM);
            return MemberProcess.start(launcher, log, zk, m.id, "--shards", String.valueOf(SHARDS),
                    "--initial-servers", String.valueOf(MEMBERS), "--session-timeout-ms", "2000",
                    "--member-lease-ms", String.valueOf(memberLeaseMillis),
                    "--table-capacity", "16k", "--region-size", "16m", "--segment-size", "1m",
                    "--dir", stores.resolve("member-" + m.id).toString(),
                    "--listen", fabric.equals("tcp") ? "tcp://" + network.host(m.host()).address() + ":0"
                            : "shm://" + stores.resolve("fabric-" + m.id));
        } catch (RuntimeException e) {
            System.out.println("nemesis: member " + m.id + " did not start (" + e.getMessage() + ")");
            return null;
        }
    }

    /** Every shard served by a full primary and a full backup (a returning member's share may still be moving to it). */
    private static boolean settled(ShardMap map) {
        return map != null && IntStream.range(0, map.shards())
                .allMatch(s -> map.state(s) == ShardMap.State.FULL && map.backup(s) != ShardMap.NONE);
    }

    /** Restarts members that are dead and not meant to be down (killed, halted after a pause or a cut). */
    private void restartDeadMembers() {
        if (zookeeperDown) {
            return;
        }
        for (Member m : members) {
            MemberProcess p = m.process;
            if ((p == null || !p.alive()) && !m.paused && System.nanoTime() >= m.downUntil
                    && m.restarting.compareAndSet(false, true)) {
                Thread.ofPlatform().name("nemesis-restart-" + m.id).start(() -> {
                    try {
                        note("restart member " + m.id);
                        current.add("restarting member " + m.id);
                        MemberProcess started = startMember(m);
                        if (started != null) {
                            m.process = started;
                        }
                    } finally {
                        current.remove("restarting member " + m.id);
                        m.restarting.set(false);
                    }
                });
            }
        }
    }

    // ------------------------------------------------------------------ the nemesis

    /**
     * A fault every 0.5 to 2.5 s until the end, each undone (healed, resumed, restarted) by a task of its own a little
     * later, so faults overlap at times. The first faults are each kind once, in an order the seed shuffles, so that a
     * short run inflicts every kind.
     */
    private void runSchedule(List<Fault> kinds, NemesisLoad load) throws Exception {
        long start = System.nanoTime();
        long end = start + (long) (minutes * 60e9);
        Thread progress = Thread.ofPlatform().daemon().name("nemesis-progress").start(() -> {
            try {
                while (true) {
                    Thread.sleep(PROGRESS);
                    System.out.printf(Locale.ROOT, "nemesis: %d s of %d, operations %d (%s), faults %d (kills %d, "
                            + "pauses %d, partitions %d, zookeeper restarts %d), now: %s%n",
                            (System.nanoTime() - start) / 1_000_000_000L, Math.round(minutes * 60), load.operations(),
                            load.counts(), kills.get() + pauses.get() + partitions() + zookeeperRestarts.get(),
                            kills.get(), pauses.get(), partitions(), zookeeperRestarts.get(),
                            current.isEmpty() ? "nothing" : String.join(", ", current));
                }
            } catch (InterruptedException e) {
                // the schedule is over
            }
        });
        List<Fault> first = new ArrayList<>(kinds);
        Collections.shuffle(first, random);
        try {
            while (System.nanoTime() < end) {
                Thread.sleep(500 + random.nextInt(2000));
                Fault f = !first.isEmpty() ? first.removeFirst() : pick(kinds);
                if (!inject(f)) {
                    first.addFirst(f); // not possible now (its target is down): the next round tries again
                }
            }
        } finally {
            progress.interrupt();
            progress.join();
        }
    }

    /**
     * A fault kind at random: a kill or a pause twice as often as each of the four partitions (so the three classes
     * the last line counts come in about equal numbers, kills and pauses being often impossible while their target is
     * down), ZooKeeper restarts (which restart every member) a quarter as often.
     */
    private Fault pick(List<Fault> kinds) {
        while (true) {
            Fault f = kinds.get(random.nextInt(kinds.size()));
            int weight = switch (f) {
                case KILL, PAUSE -> 8;
                case ZOOKEEPER_RESTART -> 1;
                default -> 4;
            };
            if (kinds.size() == 1 || random.nextInt(8) < weight) {
                return f;
            }
        }
    }

    /** Injects {@code fault}; false if it cannot be now (no live primary to aim at, a link already cut). */
    private boolean inject(Fault fault) throws Exception {
        ShardMap map = writing.shardMap();
        int shard = random.nextInt(SHARDS);
        Member primary = member(map.primary(shard));
        int backupId = map.backup(shard);
        boolean done = switch (fault) {
            case KILL -> kill(random.nextInt(3) < 2 ? primary : members[random.nextInt(MEMBERS)]);
            case PAUSE -> pause(primary, (int) (memberLeaseMillis * (2 + random.nextDouble() * 6)));
            case PRIMARY_ZOOKEEPER -> primary != null && primary.up()
                    && cut(primary.host(), "zk", "primary " + primary.id + " | zookeeper");
            case PRIMARY_BACKUP -> primary != null && primary.up() && backupId != ShardMap.NONE
                    && cut(primary.host(), member(backupId).host(), "primary " + primary.id + " | backup " + backupId);
            case CLIENT_PRIMARY -> primary != null && primary.up() && cutFromClients(primary);
            case READER_ZOOKEEPER -> cutReaders();
            case ZOOKEEPER_RESTART -> restartZooKeeper();
        };
        if (done) {
            injected.computeIfAbsent(fault, f -> new AtomicLong()).incrementAndGet();
        }
        return done;
    }

    private Member member(int id) {
        return id >= 1 && id <= MEMBERS ? members[id - 1] : null;
    }

    private boolean kill(Member m) {
        if (m == null || !m.up()) {
            return false;
        }
        m.downUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1000 + random.nextInt(2000));
        note("kill -9 member " + m.id);
        m.process.kill();
        kills.incrementAndGet();
        return true;
    }

    private boolean pause(Member m, int millis) {
        if (m == null || !m.up()) {
            return false;
        }
        String what = "member " + m.id + " paused " + millis + " ms";
        note("SIGSTOP member " + m.id + " for " + millis + " ms");
        m.paused = true;
        m.process.pause();
        current.add(what);
        pauses.incrementAndGet();
        undo.schedule(() -> {
            try {
                m.process.resume();
                note("SIGCONT member " + m.id);
            } finally {
                m.paused = false; // restarted by the next round if it ended while stopped
                current.remove(what);
            }
        }, millis, TimeUnit.MILLISECONDS);
        return true;
    }

    private boolean cut(String a, String b, String what) throws Exception {
        if (!network.cut(a, b)) {
            return false;
        }
        healLater(what, () -> network.heal(a, b));
        return true;
    }

    private boolean cutFromClients(Member m) throws Exception {
        if (!network.cutFromRoot(m.host())) {
            return false;
        }
        healLater("clients | primary " + m.id, () -> network.healFromRoot(m.host()));
        return true;
    }

    private boolean cutReaders() {
        if (current.contains("readers | zookeeper")) {
            return false;
        }
        link.cut();
        healLater("readers | zookeeper", link::heal);
        return true;
    }

    private interface Heal {
        void run() throws Exception;
    }

    /** Notes the cut and heals it after 2 to 5 s. */
    private void healLater(String what, Heal heal) {
        note("partition " + what);
        current.add(what);
        undo.schedule(() -> {
            try {
                heal.run();
                note("heal " + what);
            } catch (Exception e) {
                problems.add("healing " + what + " failed: " + e);
            }
            current.remove(what);
        }, 2000 + random.nextInt(3000), TimeUnit.MILLISECONDS);
    }

    /** Stops ZooKeeper and starts it again on its data; every member halts meanwhile (its lease) and is restarted. */
    private boolean restartZooKeeper() throws Exception {
        note("restart zookeeper");
        current.add("zookeeper restarting");
        zookeeperDown = true;
        try {
            zookeeper.restart();
        } finally {
            zookeeperDown = false;
            current.remove("zookeeper restarting");
        }
        zookeeperRestarts.incrementAndGet();
        return true;
    }

    private long partitions() {
        return count(Fault.PRIMARY_ZOOKEEPER) + count(Fault.READER_ZOOKEEPER) + count(Fault.PRIMARY_BACKUP)
                + count(Fault.CLIENT_PRIMARY);
    }

    private long count(Fault f) {
        AtomicLong n = injected.get(f);
        return n == null ? 0 : n.get();
    }

    private void note(String text) {
        HistoryRecorder h = history;
        if (h != null) {
            h.note(NEMESIS, text);
        }
    }

    // ------------------------------------------------------------------ the end

    /** Heals every cut, resumes and restarts every member, and waits until every shard has a full backup again. */
    private void settle() throws Exception {
        network.healAll();
        link.heal();
        for (Member m : members) {
            if (m.paused) {
                m.process.resume();
                m.paused = false;
            }
            m.downUntil = 0;
        }
        note("healed; settling");
        System.out.println("nemesis: faults stopped, everything healed; waiting for every member and shard");
        long deadline = System.nanoTime() + SETTLE.toNanos();
        while (System.nanoTime() < deadline) {
            restartDeadMembers();
            ShardMap map = writing.shardMap();
            if (Arrays.stream(members).allMatch(Member::up) && settled(map)
                    && reading.shardMap().epoch() == map.epoch()) {
                System.out.println("nemesis: settled, map " + map);
                return;
            }
            Thread.sleep(250);
        }
        problems.add("the cluster did not settle within " + SETTLE.toSeconds() + " s: map " + writing.shardMap());
        printLastLines();
    }

    /**
     * After a failure to settle, each member's last lines of its own (its log's {@code io.erda} lines): the run's
     * directory may be gone by the time anyone reads it (a CI machine's temporary directory), the output is not.
     */
    private void printLastLines() {
        for (Member m : members) {
            MemberProcess p = m.process;
            if (p == null) {
                continue;
            }
            try (var lines = Files.lines(p.log())) {
                List<String> erda = lines.filter(l -> l.contains(" io.erda.")).toList();
                System.out.println("nemesis: member " + m.id + " (" + p.log().getFileName() + "), its last "
                        + Math.min(LAST_LINES, erda.size()) + " lines:");
                erda.subList(Math.max(0, erda.size() - LAST_LINES), erda.size())
                        .forEach(l -> System.out.println("    " + l));
            } catch (java.io.IOException | java.io.UncheckedIOException e) {
                System.out.println("nemesis: member " + m.id + ": its log " + p.log() + " unreadable: " + e);
            }
        }
    }

    /** Reads every key once more (each attempt recorded); a key that cannot be read in 20 attempts is a problem. */
    private void readBack(NemesisLoad load) throws InterruptedException {
        for (int k = 0; k < load.keys(); k++) {
            int attempts = 0;
            while (!load.read(writing, NemesisLoad.READ_BACK, k)) {
                if (++attempts == 20) {
                    problems.add("key " + NemesisLoad.key(k) + " could not be read back in 20 attempts");
                    break;
                }
                Thread.sleep(250);
            }
        }
    }

    /** Stops clients, members and ZooKeeper and deletes the namespaces and stores; on every exit path, once. */
    private void cleanUp() {
        if (!cleanedUp.compareAndSet(false, true)) {
            return;
        }
        undo.shutdownNow();
        for (AutoCloseable c : new AutoCloseable[] {reading, writing, link}) {
            closeQuietly(c);
        }
        for (Member m : members) {
            MemberProcess p = m.process;
            if (p != null) {
                p.kill(); // SIGKILL works on a stopped process too
            }
        }
        closeQuietly(zookeeper);
        closeQuietly(network);
        try {
            ClusterDemo.deleteTree(stores);
        } catch (Exception e) {
            System.out.println("nemesis: could not delete " + stores + ": " + e);
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (Exception e) {
            System.out.println("nemesis: closing " + c + " failed: " + e);
        }
    }
}
