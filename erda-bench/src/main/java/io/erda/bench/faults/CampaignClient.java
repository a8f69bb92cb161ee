package io.erda.bench.faults;

import io.erda.client.ClientOptions;
import io.erda.client.KeyValueClient;
import io.erda.fabric.Endpoint;
import io.erda.fabric.FaultInjectingEndpoint;
import io.erda.history.HistoryRecorder;
import io.erda.history.Operation;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * One client process of a fault campaign ({@link FaultCampaign} starts several): it PUTs and DELETEs its own keys
 * and GETs the keys of every writer speaking its protocol, one operation at a time, and records each in its history
 * file ({@link HistoryRecorder}; a PUT's value is its sequence number, a DELETE writes absent, a failed PUT is
 * indeterminate and a failed GET failed). It injects its own faults, with the campaign's seed: a WRITE dropped, truncated or delayed past
 * the lease ({@link FaultInjectingEndpoint}), a connection broken, and its own death by SIGKILL between a PUT's
 * reservation and its WRITE or in the middle of the WRITE. Server deaths only make its operations fail until the
 * server is back; it keeps going until the stop file appears.
 */
@Command(name = "campaign-client", mixinStandardHelpOptions = true, description = "A fault campaign's client process.")
public final class CampaignClient implements Callable<Integer> {
    @Option(names = "--uri", required = true)
    URI uri;
    @Option(names = "--protocol", required = true, description = "erda, redo-log or read-after-write")
    String protocol;
    @Option(names = "--id", required = true, description = "Writer id: the keys this process owns")
    int id;
    @Option(names = "--incarnation", required = true, description = "Restarts of this writer so far: the high half of its sequence numbers")
    int incarnation;
    @Option(names = "--peers", required = true, split = ",", description = "Writer ids whose keys it reads (its own included)")
    List<Integer> peers;
    @Option(names = "--keys", required = true)
    int keys;
    @Option(names = "--max-value", defaultValue = "3000")
    int maxValue;
    @Option(names = "--seed", required = true)
    long seed;
    @Option(names = "--rate", defaultValue = "300", description = "Operations per second at most")
    int rate;
    @Option(names = "--write-fault-rate", defaultValue = "0.03", description = "Share of PUTs with an injected WRITE fault")
    double writeFaultRate;
    @Option(names = "--no-silent-write-faults", description = "Inject only delayed WRITEs, never a WRITE dropped or"
            + " truncated with a successful completion")
    boolean noSilentWriteFaults;
    @Option(names = "--kill-rate", defaultValue = "0.002", description = "Share of PUTs at which the process kills itself")
    double killRate;
    @Option(names = "--break-rate", defaultValue = "0.003", description = "Share of operations preceded by a broken connection")
    double breakRate;
    @Option(names = "--lease-ms", required = true)
    long leaseMillis;
    @Option(names = "--history", required = true)
    Path historyFile;
    @Option(names = "--stop-file", required = true)
    Path stopFile;

    private final AtomicReference<FaultInjectingEndpoint> endpoint = new AtomicReference<>();

    public static void main(String[] args) {
        System.exit(new CommandLine(new CampaignClient()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        SplittableRandom random = new SplittableRandom(seed);
        ClientOptions.Protocol p = ClientOptions.Protocol.fromOption(protocol);
        boolean writesOneSided = p != ClientOptions.Protocol.REDO_LOG;
        ClientOptions options = ClientOptions.of(uri).withProtocol(p).withPoolSize(1)
                .withOperationTimeout(Duration.ofSeconds(5))
                .withEndpointDecorator((Endpoint e) -> {
                    FaultInjectingEndpoint f = new FaultInjectingEndpoint(e);
                    endpoint.set(f);
                    return f;
                });
        long counter = 0;
        long pace = 1_000_000_000L / Math.max(1, rate);
        int process = CampaignVerdict.process(id, incarnation);
        try (HistoryRecorder history = HistoryRecorder.appendingTo(historyFile)) {
            KeyValueClient client = null;
            while (!Files.exists(stopFile)) {
                long next = System.nanoTime() + pace;
                if (client == null) {
                    client = connect(options);
                    if (client == null) {
                        Thread.sleep(50);
                        continue;
                    }
                }
                if (random.nextDouble() < breakRate && endpoint.get() != null) {
                    endpoint.get().breakConnection();
                    history.note(process, CampaignVerdict.BROKEN_CONNECTION);
                }
                if (random.nextBoolean()) {
                    int index = random.nextInt(keys);
                    String key = "w" + id + "k" + index;
                    long seq = ((long) incarnation << 32) | ++counter;
                    boolean delete = random.nextInt(10) == 0;
                    String fault = writesOneSided && !delete ? chooseFault(random, history, process, key) : null;
                    long op = history.invokeWrite(process, key, delete ? Operation.ABSENT : seq);
                    try {
                        if (delete) {
                            client.delete(CampaignValue.key(id, index));
                        } else {
                            int length = CampaignValue.HEADER + random.nextInt(maxValue - CampaignValue.HEADER + 1);
                            client.put(CampaignValue.key(id, index), CampaignValue.encode(id, index, seq, length));
                        }
                        FaultInjectingEndpoint f = endpoint.get();
                        boolean applied = fault != null && f != null && f.armedFaults() == 0;
                        if (f != null) {
                            f.disarm();
                        }
                        // a dropped or truncated WRITE completes: the PUT returns but the client knows it lied
                        if (applied && !fault.equals("delay")) {
                            history.info(op);
                        } else {
                            history.ok(op);
                        }
                        if (applied) {
                            history.note(process, CampaignVerdict.WRITE_FAULT + " " + fault + " " + key);
                        }
                    } catch (RuntimeException e) {
                        history.info(op); // a failed PUT may or may not have taken effect
                        history.note(process, "failed " + key + " " + reason(e));
                        disarm();
                    }
                } else {
                    get(client, history, process, peers.get(random.nextInt(peers.size())), random.nextInt(keys));
                }
                long sleep = next - System.nanoTime();
                if (sleep > 0) {
                    Thread.sleep(sleep / 1_000_000, (int) (sleep % 1_000_000));
                }
            }
            if (client != null) {
                client.close();
            }
        }
        return 0;
    }

    private static void get(KeyValueClient client, HistoryRecorder history, int process, int writer, int index) {
        long op = history.invokeRead(process, "w" + writer + "k" + index);
        byte[] value;
        try {
            value = client.get(CampaignValue.key(writer, index));
        } catch (RuntimeException e) {
            history.fail(op); // a GET has no effect: a failed one proves nothing, but the campaign counts it
            return;
        }
        history.ok(op, CampaignValue.historyValue(writer, index, value, history, process));
    }

    /** Arms at most one fault for the next PUT's WRITE and names it; kills are recorded before they happen. */
    private String chooseFault(SplittableRandom random, HistoryRecorder history, int process, String key) {
        FaultInjectingEndpoint f = endpoint.get();
        if (f == null) {
            return null;
        }
        double r = random.nextDouble();
        if (r < killRate) {
            boolean midWrite = random.nextBoolean();
            history.note(process, "kill " + key + (midWrite ? " mid-write" : " before-write"));
            f.killProcessAtNextWrite(midWrite ? 1 + random.nextInt(CampaignValue.HEADER * 2) : 0, wr -> true);
            return "kill";
        }
        if (r >= killRate + writeFaultRate) {
            return null;
        }
        return switch (noSilentWriteFaults ? 2 : random.nextInt(3)) {
            case 0 -> {
                f.dropNextWrite();
                yield "drop";
            }
            case 1 -> {
                f.truncateNextWrite(random.nextInt(CampaignValue.HEADER * 2));
                yield "truncate";
            }
            default -> {
                f.delayNextWrite(Duration.ofMillis(random.nextLong(2 * leaseMillis + 1)));
                yield "delay";
            }
        };
    }

    private void disarm() {
        FaultInjectingEndpoint f = endpoint.get();
        if (f != null) {
            f.disarm();
        }
    }

    private static KeyValueClient connect(ClientOptions options) {
        try {
            return KeyValueClient.connect(options);
        } catch (RuntimeException e) {
            return null; // the server is down or restarting
        }
    }

    static String reason(Throwable e) {
        String m = e.getClass().getSimpleName() + ": " + e.getMessage();
        return m.replace('\n', ' ').replace('\r', ' ');
    }
}
