package io.erda.bench.faults;

import io.erda.bench.backend.ScratchDirectory;
import io.erda.bench.backend.ServerProcess;
import io.erda.bench.backend.ServerSettings;
import io.erda.cleaner.CleaningPoint;
import io.erda.client.ClientOptions;
import io.erda.client.ErdaClient;
import io.erda.client.KeyValueClient;
import io.erda.history.History;
import io.erda.history.HistoryRecorder;
import io.erda.protocol.PersistenceMethod;
import io.erda.protocol.PmConfiguration;
import io.erda.server.offline.StoreVerifier;
import io.erda.testsupport.ChildProcess;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * A randomized fault campaign against real server processes (docs/ARCHITECTURE.md, "Fault campaign"): several
 * {@link CampaignClient} processes write and read while this driver kills the server with -9 and restarts it on the
 * same PM files, cuts its power (kill -9, then {@code erda-server power-fail} keeps only what the server's PM
 * configuration made durable: {@code --pm-config}, by default each persistence method's own), kills clients with -9,
 * and has the server clean its logs at random moments, half the servers armed to halt at a random point of that
 * cleaning (merge, replicate or switch: begun, midway, done; the server's {@code ERDA_CLEANER_HALT_AT}); the clients add
 * dropped, truncated and delayed WRITEs, broken connections, and their own deaths between a PUT's reservation and
 * its WRITE or in the middle of it. After every restart the store is recovered on a private address, every key is
 * read back there, before any client can write again (a newer write of a key could otherwise hide the loss of an
 * acknowledged one), then the store is stopped, verified offline ({@code verify} must be clean) and restarted for the
 * clients. Every process records its operations ({@link io.erda.history.HistoryRecorder}), and
 * {@link CampaignVerdict} checks the whole history for linearizability, a register per key.
 *
 * <p>Failed GETs are counted. A GET is <em>between faults</em> when it was invoked after the public server's start
 * returned and completed before the driver next killed it (or cut its power, or stopped the clients at the end):
 * the server was up for all of it. Client kills, injected write faults, broken connections and cleanings happen
 * between faults in this sense; a GET they break still counts, as it should, since the server was there to answer.
 * A campaign in which fewer than half the GETs between faults succeeded (or none was made) fails: reads that mostly
 * fail check little.
 *
 * <p>A method that is not enough for the configuration ({@code PersistenceMethod.correctIn}, the taxonomy's verdict)
 * loses acknowledged writes at power failures: the checker counts them as lost (or stale, or torn) like any other,
 * the campaign fails, and a line before the last says the losses were expected and whether they were shown.
 *
 * <p>The seed fixes the schedule: which fault when, which persistence method each server start uses, each client's
 * operations and injected faults. Thread timing is the machine's, so a seed reproduces the schedule, not the
 * interleaving.
 */
@Command(name = "fault-campaign", mixinStandardHelpOptions = true,
        description = "Random crashes, power failures, client kills and write faults against real server and client "
                + "processes; checks that no acknowledged write is lost and no read is torn or stale.")
public final class FaultCampaign implements Callable<Integer> {
    @Option(names = "--minutes", defaultValue = "3", description = "Length of the fault schedule. Default: ${DEFAULT-VALUE}.")
    double minutes;
    @Option(names = "--fabric", defaultValue = "shm", description = "shm, tcp or verbs. Default: ${DEFAULT-VALUE}.")
    String fabric;
    @Option(names = "--seed", description = "Seed of the schedule (default: random, printed first).")
    Long seed;
    @Option(names = "--clients", defaultValue = "3", description = "Client processes. Default: ${DEFAULT-VALUE}.")
    int clients;
    @Option(names = "--keys", defaultValue = "64", description = "Keys each client writes. Default: ${DEFAULT-VALUE}.")
    int keys;
    @Option(names = "--protocol", defaultValue = "all",
            description = "erda, redo-log, read-after-write, herd, rdmp-sa, rdmp-cc, or all (erda, redo-log and"
                    + " read-after-write; clients take them in turn). Default: ${DEFAULT-VALUE}.")
    String protocol;
    @Option(names = "--persistence", defaultValue = "all",
            description = "wsp, read-after-write, server-flush, or all (each server start takes the next). Default: ${DEFAULT-VALUE}.")
    String persistence;
    @Option(names = "--pm-config", paramLabel = "CONFIGURATION",
            description = "The server configuration of the remote-persistence taxonomy every server start emulates "
                    + "(e.g. DMP+DDIO+DRAM-RQWRB; docs/persistence.md). A method not enough for it loses acknowledged "
                    + "writes at power failures, and the campaign reports them. Default: each method's own "
                    + "(wsp: WSP, read-after-write: DMP+!DDIO, server-flush: DMP+DDIO).")
    String pmConfig;
    @Option(names = "--no-power-failures",
            description = "Leave power failures out (by default the server runs with --pm-emulation power-failure and "
                    + "loses power now and then; a real RNIC cannot mirror its writes, so verbs on hardware needs this "
                    + "unless --persistence wsp).")
    boolean noPowerFailures;
    @Option(names = "--put", defaultValue = "reserve", description = "The servers' --put: reserve, or one-sided (Erda's"
            + " updates are the clients' WRITE into a leased block and CAS; docs/one-sided-put.md; with --persistence"
            + " all the servers take wsp and read-after-write only). Default: ${DEFAULT-VALUE}.")
    String put;
    @Option(names = "--silent-write-faults", defaultValue = "auto", description = "Whether clients' injected WRITE"
            + " faults include WRITEs the fabric drops or truncates yet completes successfully (delayed WRITEs and"
            + " kills mid-WRITE are always in): on, off, or auto: on, except for rdmp-sa and rdmp-cc, whose objects"
            + " carry no checksum (RDMP-KV relies on a reliable connection to report a WRITE that did not land, so"
            + " such a fault tears a value by design; with on, the campaign shows it). Default: ${DEFAULT-VALUE}.")
    String silentWriteFaults;
    @Option(names = "--lease-ms", defaultValue = "200", description = "The server's lease. Default: ${DEFAULT-VALUE}.")
    long leaseMillis;
    @Option(names = "--rate", defaultValue = "300", description = "Operations per second per client at most. Default: ${DEFAULT-VALUE}.")
    int rate;
    @Option(names = "--verbs-host", defaultValue = "192.0.2.1", description = "verbs: the RNIC's address. Default: ${DEFAULT-VALUE}.")
    String verbsHost;
    @Option(names = "--pm-dir", defaultValue = "/dev/shm", description = "Where the store directory goes. Default: ${DEFAULT-VALUE}.")
    Path pmBase;
    @Option(names = "--out", defaultValue = "target/fault-campaign",
            description = "Histories and process logs go to OUT/seed-SEED. Default: ${DEFAULT-VALUE}.")
    Path outBase;

    @Option(names = "--judge", paramLabel = "DIR",
            description = "Run nothing: judge the histories a campaign left in DIR (OUT/seed-SEED; e.g. one ended by a "
                    + "time limit before its verdict) and print the verdict as a campaign does.")
    Path judge;

    /** Clients at most: a client's process number in the history is incarnation * MAX_CLIENTS + id. */
    static final int MAX_CLIENTS = 1000;
    private static final String SERVER_MAIN = "io.erda.server.ErdaServerMain";
    private static final Duration PROGRESS = Duration.ofSeconds(5);

    private Random random;
    private Path dir;
    private Path out;
    private Path stopFile;
    private String publicUri;
    private List<String> methods;
    /** The configuration every server start emulates, or null: each method's own. */
    private PmConfiguration configuration;
    private List<String> protocols;
    private ServerProcess server;
    private int serverStarts;
    private final List<Client> running = new ArrayList<>();
    private final List<String> problems = new ArrayList<>();
    private HistoryRecorder driver;
    private volatile int serverKills;
    private volatile int powerFails;
    private volatile int clientKills;
    private volatile int cleanings;
    private volatile int cleaningHalts;
    private volatile int verifies;
    /**
     * The cleaning point at which the public server halts (the server's {@code ERDA_CLEANER_HALT_AT}), or null: it is
     * not armed. Drawn from its own generator, so arming leaves the schedule of a seed as it was.
     */
    private CleaningPoint armedAt;
    private Random arming;

    /** A client process and what the driver knows of it. */
    private static final class Client {
        final int id;
        final String protocol;
        int incarnation;
        Process process;
        boolean killedByDriver;

        Client(int id, String protocol) {
            this.id = id;
            this.protocol = protocol;
        }
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new FaultCampaign()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        if (judge != null) {
            return judgeOnly();
        }
        long s = seed != null ? seed : new Random().nextLong() & Long.MAX_VALUE;
        random = new Random(s);
        arming = new Random(~s);
        boolean oneSided;
        try {
            oneSided = io.erda.protocol.PutMode.fromOption(put) == io.erda.protocol.PutMode.ONE_SIDED;
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(new CommandLine(this), e.getMessage());
        }
        methods = persistence.equals("all") ? oneSided ? List.of("wsp", "read-after-write")
                : List.of("wsp", "read-after-write", "server-flush") : List.of(persistence);
        if (oneSided && methods.contains("server-flush")) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--put one-sided needs --persistence wsp,"
                    + " read-after-write or all (server-flush would make every update two-sided again)");
        }
        protocols = protocol.equals("all") ? List.of("erda", "redo-log", "read-after-write") : List.of(protocol);
        protocols.forEach(ClientOptions.Protocol::fromOption);
        if (!List.of("auto", "on", "off").contains(silentWriteFaults)) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--silent-write-faults " + silentWriteFaults
                    + " is not auto, on or off");
        }
        try {
            configuration = pmConfig == null ? null : PmConfiguration.parse(pmConfig);
            methods.forEach(PersistenceMethod::fromOption);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(new CommandLine(this), e.getMessage());
        }
        if (fabric.equals("verbs") && !noPowerFailures
                && !methods.stream().allMatch(m -> configurationFor(m).keepsOneSidedOnceReceived())) {
            throw new CommandLine.ParameterException(new CommandLine(this), "power failures on verbs need a WSP "
                    + "configuration (--persistence wsp and no --pm-config, or --pm-config WSP+...): a real RNIC places "
                    + "WRITEs the emulation cannot mirror into its durable images (or give --no-power-failures)");
        }
        if (clients < 1 || clients > MAX_CLIENTS || keys < 1) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--clients " + clients + " must be 1 to "
                    + MAX_CLIENTS + " and --keys " + keys + " at least 1");
        }
        out = outBase.resolve("seed-" + s);
        ScratchDirectory.delete(out);
        Files.createDirectories(out);
        dir = pmBase.resolve("erda-campaign-" + s + "-" + ProcessHandle.current().pid());
        Files.createDirectories(dir);
        stopFile = out.resolve("stop");
        publicUri = uri("");
        driver = HistoryRecorder.appendingTo(out.resolve("driver.history"));
        System.out.printf(Locale.ROOT, "fault-campaign: seed %d, %.1f min on %s, %d clients (%s) x %d keys, persistence %s,"
                + " put %s, power failures %s, lease %d ms; store %s, histories %s%n", s, minutes, fabric, clients,
                String.join("/", protocols), keys, String.join("/", methods), put, !noPowerFailures ? "on" : "off",
                leaseMillis, dir, out);
        System.out.println("fault-campaign: " + verdicts());
        List<String> unchecked = protocols.stream().filter(p -> !silentWriteFaults(p) && !silentWriteFaults.equals("off"))
                .toList();
        if (!unchecked.isEmpty()) {
            System.out.println("fault-campaign: no silent WRITE faults for " + String.join(", ", unchecked) + ": its"
                    + " objects carry no checksum, so a WRITE dropped or truncated with a successful completion tears a"
                    + " value by design (RDMP-KV relies on a reliable connection); --silent-write-faults on shows it");
        }
        try {
            server = startPublicServer();
            for (int i = 0; i < clients; i++) {
                Client c = new Client(i, protocols.get(i % protocols.size()));
                running.add(c);
                startClient(c);
            }
            schedule();
            finish();
        } finally {
            stopAll();
            driver.close();
            ScratchDirectory.delete(dir);
            if (fabric.equals("shm")) { // the listeners' directories (public and recovery)
                ScratchDirectory.delete(dir.resolveSibling(dir.getFileName() + "-fabric"));
                ScratchDirectory.delete(dir.resolveSibling(dir.getFileName() + "-fabric-recovery"));
            }
        }
        return report(CampaignVerdict.judge(History.read(historyFiles())));
    }

    private void schedule() throws Exception {
        long start = System.nanoTime();
        long end = start + (long) (minutes * 60e9);
        // its own thread: a restart (recovery, verify, restart, read-back) can take a minute in an emulated VM
        Thread progress = Thread.ofPlatform().daemon().name("campaign-progress").start(() -> {
            try {
                while (true) {
                    Thread.sleep(PROGRESS);
                    System.out.printf(Locale.ROOT, "fault-campaign: %d s of %d, server kills %d (%d halted by a "
                            + "cleaning), power failures %d, client kills %d, cleanings %d, verified restarts %d%n",
                            (System.nanoTime() - start) / 1_000_000_000L, Math.round(minutes * 60), serverKills,
                            cleaningHalts, powerFails, clientKills, cleanings, verifies);
                }
            } catch (InterruptedException e) {
                // the schedule is over
            }
        });
        try {
            runSchedule(end);
        } finally {
            progress.interrupt();
            progress.join();
        }
    }

    /**
     * Random faults until the end: server kills, client kills and cleanings (and power failures, if on) in the
     * proportions 3 : 2 : 1 (: 3): a server's death is the fault that tests recovery, and each costs several seconds
     * (a recovering start, the read-back, an offline verify, the public start), so it gets the most picks. The first
     * few are every kind once, in an order the seed shuffles, so that a campaign of any length inflicts each kind: how
     * many faults fit in a minute depends on the machine (a restart verifies the store offline and reads every key
     * back), and with purely random picks a short campaign can end without a server kill on a loaded machine.
     */
    private void runSchedule(long end) throws Exception {
        List<Integer> kinds = new ArrayList<>(noPowerFailures ? List.of(0, 3, 5) : List.of(0, 3, 5, 6));
        java.util.Collections.shuffle(kinds, random);
        while (System.nanoTime() < end && problems.isEmpty()) {
            Thread.sleep(200 + random.nextInt(800));
            watchClients();
            int pick = !kinds.isEmpty() ? kinds.removeFirst() : random.nextInt(!noPowerFailures ? 9 : 6);
            switch (pick) {
                case 0, 1, 2 -> restart(false);
                case 3, 4 -> killClient(running.get(random.nextInt(running.size())));
                case 5 -> clean();
                default -> restart(true);
            }
        }
    }

    /**
     * kill -9 of the server (and, for a power failure, the loss of what was not durable), then a full restart; the
     * read-back happens on the recovering server, which no client can reach.
     */
    private void restart(boolean powerFailure) throws Exception {
        driver.note(CampaignVerdict.DRIVER, CampaignVerdict.SERVER_DOWN + (powerFailure ? " power-failure" : " kill"));
        server.kill();
        driver.note(CampaignVerdict.DRIVER, CampaignVerdict.SERVER_DEAD);
        if (powerFailure) {
            powerFails++;
            runServerCommand("power-fail", "--dir", dir.toString(), "--seed", Long.toString(random.nextLong()));
        } else {
            serverKills++;
        }
        recoverAndVerify("restart " + serverStarts + " (" + (powerFailure ? "power failure" : "kill -9") + ")", true);
        server = startPublicServer();
    }

    /**
     * Starts the server clients reach. Half the starts are armed: the server halts (as a kill -9 would) when a
     * cleaning reaches a point drawn from every {@link CleaningPoint}, and cleans only when the driver asks, so the
     * halt comes where the driver expects it ({@link #clean}).
     */
    private ServerProcess startPublicServer() throws IOException {
        CleaningPoint[] points = CleaningPoint.values();
        armedAt = arming.nextBoolean() ? points[arming.nextInt(points.length)] : null;
        ServerProcess started = startServer(publicUri, armedAt);
        driver.note(CampaignVerdict.DRIVER, CampaignVerdict.SERVER_UP);
        return started;
    }

    /** Reads every key back from {@code from} through the protocol that writes it; then notes the read-back done. */
    private void readEveryKey(ServerProcess from) {
        for (String p : protocols) {
            try (KeyValueClient kv = connectWithRetry(from, p)) {
                for (Client c : running) {
                    if (!c.protocol.equals(p)) {
                        continue;
                    }
                    for (int k = 0; k < keys; k++) {
                        long op = driver.invokeRead(CampaignVerdict.DRIVER, "w" + c.id + "k" + k);
                        byte[] value = getWithRetry(kv, CampaignValue.key(c.id, k));
                        driver.ok(op, CampaignValue.historyValue(c.id, k, value, driver, CampaignVerdict.DRIVER));
                    }
                }
            }
        }
        driver.note(CampaignVerdict.DRIVER, CampaignVerdict.READ_BACK_DONE);
    }

    private KeyValueClient connectWithRetry(ServerProcess to, String p) {
        ClientOptions options = ClientOptions.of(URI.create(to.uri())).withProtocol(ClientOptions.Protocol.fromOption(p))
                .withPoolSize(1).withOperationTimeout(Duration.ofSeconds(10));
        RuntimeException last = null;
        for (int attempt = 0; attempt < 20; attempt++) {
            try {
                return KeyValueClient.connect(options);
            } catch (RuntimeException e) {
                last = e;
                sleep(100);
            }
        }
        throw new IllegalStateException("cannot connect to " + to.uri() + " as " + p, last);
    }

    private static byte[] getWithRetry(KeyValueClient kv, byte[] key) {
        RuntimeException last = null;
        for (int attempt = 0; attempt < 10; attempt++) {
            try {
                return kv.get(key);
            } catch (RuntimeException e) {
                last = e;
                sleep(100);
            }
        }
        throw new IllegalStateException("read-back of " + new String(key) + " keeps failing", last);
    }

    /**
     * Asks the server to clean a random head. An armed server ({@link #armedAt}) halts when the run reaches its point:
     * the driver notes a server kill first, waits for the halt (or kills the server itself if the run never got there,
     * e.g. nothing to clean), then recovers, verifies and restarts as after any kill.
     */
    private void clean() throws Exception {
        if (armedAt == null) {
            cleanNow();
            return;
        }
        driver.note(CampaignVerdict.DRIVER, CampaignVerdict.SERVER_DOWN + " kill");
        cleanNow();
        Integer exit = server.awaitExit(Duration.ofSeconds(10));
        if (exit == null) {
            server.kill(); // the run did not reach the point: an ordinary kill -9
        } else if (exit == 137) {
            cleaningHalts++;
        } else {
            problems.add("the server armed to halt at " + armedAt + " exited with status " + exit + "; see "
                    + server.log());
        }
        driver.note(CampaignVerdict.DRIVER, CampaignVerdict.SERVER_DEAD);
        serverKills++;
        recoverAndVerify("restart " + serverStarts + " (" + (exit != null ? "halted at cleaning point " + armedAt
                : "kill -9") + ")", true);
        server = startPublicServer();
    }

    private void cleanNow() {
        try (ErdaClient admin = ErdaClient.connect(ClientOptions.of(URI.create(server.uri())).withPoolSize(1)
                .withOperationTimeout(Duration.ofSeconds(30)))) {
            admin.clean(random.nextInt(admin.storeInfo().heads().heads().size()));
            cleanings++;
        } catch (RuntimeException e) {
            // a head already being cleaned, nothing to clean, or a server halting in the run
        }
    }

    private void killClient(Client c) throws InterruptedException {
        c.killedByDriver = true;
        c.process.destroyForcibly();
        c.process.waitFor();
        watchClients();
    }

    /** Restarts clients that died (killed by the driver or by themselves); any other exit fails the campaign. */
    private void watchClients() {
        for (Client c : running) {
            if (c.process.isAlive()) {
                continue;
            }
            int status = c.process.exitValue();
            if (status != 137 && !c.killedByDriver) {
                problems.add("client " + c.id + " incarnation " + c.incarnation + " exited with status " + status
                        + "; see " + clientLog(c));
                continue;
            }
            clientKills++;
            driver.note(CampaignVerdict.DRIVER, CampaignVerdict.CLIENT_KILLED + " " + c.id + " " + c.incarnation);
            c.killedByDriver = false;
            c.incarnation++;
            startClient(c);
        }
    }

    private void startClient(Client c) {
        List<String> peerIds = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
            if (protocols.get(i % protocols.size()).equals(c.protocol)) {
                peerIds.add(Integer.toString(i));
            }
        }
        List<String> command = new ArrayList<>(List.of(ServerProcess.javaExecutable(),
                "--enable-native-access=ALL-UNNAMED", "-XX:+UseSerialGC", "-Xmx256m", "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"), CampaignClient.class.getName(),
                "--uri", publicUri, "--protocol", c.protocol, "--id", Integer.toString(c.id),
                "--incarnation", Integer.toString(c.incarnation), "--peers", String.join(",", peerIds),
                "--keys", Integer.toString(keys), "--seed", Long.toString(random.nextLong()),
                "--rate", Integer.toString(rate), "--lease-ms", Long.toString(leaseMillis),
                "--history", out.resolve("client-" + c.id + "-" + c.incarnation + ".history").toString(),
                "--stop-file", stopFile.toString()));
        if (!silentWriteFaults(c.protocol)) {
            command.add("--no-silent-write-faults");
        }
        try {
            c.process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(clientLog(c).toFile()).start();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private Path clientLog(Client c) {
        return out.resolve("client-" + c.id + "-" + c.incarnation + ".log");
    }

    /** Stops the clients, reads every key back once more, stops the server cleanly, and verifies the store. */
    private void finish() throws Exception {
        Files.createFile(stopFile);
        for (Client c : running) {
            if (!c.process.waitFor(30, TimeUnit.SECONDS)) {
                problems.add("client " + c.id + " did not stop within 30 s of the stop file");
                c.process.destroyForcibly().waitFor();
            } else if (c.process.exitValue() != 0 && c.process.exitValue() != 137) {
                problems.add("client " + c.id + " exited with status " + c.process.exitValue() + "; see " + clientLog(c));
            }
        }
        driver.note(CampaignVerdict.DRIVER, CampaignVerdict.SERVER_DOWN + " clients stopped");
        readEveryKey(server);
        server.close();
        server = null;
        recoverAndVerify("the campaign", false);
    }

    /**
     * Opens the store where no client can reach it (recovery runs, as on any start), reads every key back there if
     * asked, stops it cleanly, and checks every object and entry offline. A clean stop, like a crash, leaves
     * reservations still in their lease to the next open's recovery, so verify runs after a start, never straight
     * after a stop.
     */
    private void recoverAndVerify(String after, boolean readBack) throws IOException {
        try (ServerProcess recovering = startServer(uri("-recovery"))) {
            if (readBack) {
                readEveryKey(recovering);
            }
            recovering.close();
        }
        StoreVerifier.Report report = StoreVerifier.verify(dir);
        verifies++;
        if (!report.clean()) {
            problems.add("verify after " + after + ": " + report);
        }
    }

    private int report(CampaignVerdict.Result r) {
        long writeFaults = r.writeFaults();
        long faults = serverKills + clientKills + powerFails + writeFaults + r.brokenConnections() + cleanings;
        System.out.printf(Locale.ROOT, "fault-campaign: %d GETs (%d failed; between faults %d of %d succeeded) and %d "
                + "read-backs checked for linearizability over %d keys; %d connections broken, %d cleanings done and %d "
                + "halted in their run, %d server starts, %d offline verifies%n", r.getsOk() + r.getsFailed(), r.getsFailed(),
                r.getsOkBetweenFaults(), r.getsBetweenFaults(), r.readBacks(), r.check().keys(), r.brokenConnections(),
                cleanings, cleaningHalts, serverStarts, verifies);
        r.examples().forEach(e -> System.out.println("  " + e));
        problems.addAll(r.problems());
        problems.forEach(p -> System.out.println("problem: " + p));
        // not under --judge, which knows the histories only, not the methods and configuration they ran in
        if (methods != null && !noPowerFailures && methods.stream().anyMatch(m -> !PersistenceMethod.fromOption(m)
                .correctIn(configurationFor(m)))) {
            System.out.printf(Locale.ROOT, "fault-campaign: losses expected at power failures (%s): lost %d, torn %d, "
                    + "stale %d, %s%n", verdicts(), r.lost(), r.torn(), r.stale(),
                    r.lost() + r.torn() + r.stale() > 0 || !r.check().linearizable() ? "shown" : "none observed");
        }
        System.out.printf(Locale.ROOT, "faults %d (server kills %d, client kills %d, power failures %d, write faults %d), "
                + "acknowledged writes %d, lost %d, torn %d, stale %d, gets ok %d failed %d, linearizable %s%n", faults,
                serverKills, clientKills, powerFails, writeFaults, r.acknowledged(), r.lost(), r.torn(), r.stale(),
                r.getsOk(), r.getsFailed(), r.check().verdict());
        return r.clean() && problems.isEmpty() ? 0 : 1;
    }

    /**
     * {@code --judge}: the verdict on the histories in {@link #judge}. The fault counts come from what the histories
     * record: server kills, power failures and client kills from the driver's notes (not from the client incarnations'
     * history files: an incarnation killed before it opened its history leaves none); cleanings and offline verifies
     * are not recorded.
     */
    private int judgeOnly() throws IOException {
        out = judge;
        if (!Files.isRegularFile(out.resolve("driver.history"))) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--judge " + out + ": no driver.history there "
                    + "(give a campaign's OUT/seed-SEED directory)");
        }
        for (String line : Files.readAllLines(out.resolve("driver.history"))) {
            if (line.startsWith("note ") && line.endsWith(CampaignVerdict.SERVER_DOWN + " kill")) {
                serverKills++;
            } else if (line.startsWith("note ") && line.endsWith(CampaignVerdict.SERVER_DOWN + " power-failure")) {
                powerFails++;
            } else if (line.startsWith("note ") && line.endsWith(CampaignVerdict.SERVER_UP)) {
                serverStarts++;
            } else if (line.startsWith("note ") && line.contains(" " + CampaignVerdict.CLIENT_KILLED + " ")) {
                clientKills++;
            }
        }
        System.out.printf(Locale.ROOT, "fault-campaign: judging the histories in %s (cleanings and offline verifies are "
                + "not recorded there: counted 0)%n", out);
        return report(CampaignVerdict.judge(History.read(historyFiles())));
    }

    private List<Path> historyFiles() throws IOException {
        try (Stream<Path> files = Files.list(out)) {
            return files.filter(p -> p.getFileName().toString().endsWith(".history")).sorted().toList();
        }
    }

    /**
     * How long a server start, or an offline erda-server command, may take. verbs: 5 minutes, as ycsb-compare's, since
     * under SoftRoCE's emulation (scripts/softroce-vm) a JVM's start alone can take most of a minute and a restart then
     * registers (pins) every region; a restart there once printed nothing in 60 s and ended the campaign.
     */
    private Duration serverStartLimit() {
        return Duration.ofSeconds(fabric.equals("verbs") ? 300 : 60);
    }

    /** The configuration a server of {@code method} emulates: the one given, else the method's own. */
    private PmConfiguration configurationFor(String method) {
        return configuration != null ? configuration : PmConfiguration.madeFor(PersistenceMethod.fromOption(method));
    }

    /** Each method with its configuration and the taxonomy's verdict there. */
    /** Whether {@code protocol}'s clients get silent WRITE faults ({@code --silent-write-faults}). */
    private boolean silentWriteFaults(String protocol) {
        return switch (silentWriteFaults) {
            case "on" -> true;
            case "off" -> false;
            default -> !protocol.equals("rdmp-sa") && !protocol.equals("rdmp-cc");
        };
    }

    private String verdicts() {
        return methods.stream().map(m -> m + " in " + configurationFor(m) + " "
                + PersistenceMethod.fromOption(m).reasonIn(configurationFor(m))).collect(Collectors.joining("; "));
    }

    private ServerProcess startServer(String listen) throws IOException {
        return startServer(listen, null);
    }

    /** Starts a server on {@code listen}, halting at {@code haltAt} when a cleaning reaches it (null: never). */
    private ServerProcess startServer(String listen, CleaningPoint haltAt) throws IOException {
        String method = methods.get(serverStarts % methods.size());
        serverStarts++;
        List<String> args = new ArrayList<>(List.of("--dir", dir.toString(), "--listen", listen, "--persistence", method,
                "--lease-ms", Long.toString(leaseMillis), "--heads", "4", "--table-capacity", "4096", "--workers", "2",
                "--region-size", "16m", "--segment-size", "1m", "--put", put));
        if (!noPowerFailures) {
            args.addAll(List.of("--pm-emulation", "power-failure"));
        }
        if (protocols.contains("rdmp-sa")) {
            // the clients' values run to 3,000 bytes, below the paper's 16 KiB: from 1 KiB they take the one-sided way
            args.addAll(List.of("--rdmp-sa-threshold", "1k"));
        }
        if (configuration != null) {
            args.addAll(List.of("--pm-config", configuration.label()));
        }
        if (haltAt != null) {
            args.addAll(List.of("--clean-threshold", "0")); // cleans when asked only
        }
        ServerSettings settings = new ServerSettings(fabric, dir, 0, method, true, serverStartLimit(), out);
        return ServerProcess.start("server-" + serverStarts, List.of(), SERVER_MAIN, args,
                haltAt == null ? java.util.Map.of() : java.util.Map.of("ERDA_CLEANER_HALT_AT", haltAt.name()), settings);
    }

    private void runServerCommand(String... args) throws IOException, InterruptedException {
        Path log = out.resolve(args[0] + ".log");
        ChildProcess p = ChildProcess.java(SERVER_MAIN).name("erda-server-" + args[0]).args(args).log(log).appendLog(true)
                .start();
        int status;
        try {
            status = p.awaitExit(serverStartLimit());
        } catch (IllegalStateException stillRunning) {
            status = -1;
        }
        if (status != 0) {
            p.kill();
            throw new IllegalStateException("erda-server " + String.join(" ", args) + " failed; see " + log);
        }
    }

    /** The fabric URI for this campaign's store; {@code suffix} makes a private one (shm: another directory). */
    private String uri(String suffix) throws IOException {
        return switch (fabric) {
            case "shm" -> "shm://" + dir.resolveSibling(dir.getFileName() + "-fabric" + suffix);
            case "tcp" -> "tcp://127.0.0.1:" + (suffix.isEmpty() ? freePort() : 0);
            case "verbs" -> "verbs://" + verbsHost + ":" + (suffix.isEmpty() ? freePort() : 0);
            default -> throw new CommandLine.ParameterException(new CommandLine(this),
                    "--fabric '" + fabric + "' is not shm, tcp or verbs");
        };
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private void stopAll() {
        try {
            Files.writeString(stopFile, "");
        } catch (IOException e) {
            // best effort
        }
        for (Client c : running) {
            if (c.process != null && c.process.isAlive()) {
                c.process.destroyForcibly();
            }
        }
        if (server != null) {
            server.kill();
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
