package io.erda.client;

import io.erda.history.HistoryRecorder;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;

/**
 * A client process of {@link OneSidedPutTest}: connects, prints {@code ready}, waits for a go file to appear (so that
 * two such processes, started one after the other, write at once), then for a given time, and at least
 * {@link #MIN_UPDATES} times, PUTs values
 * {@code process × 10^9 + seq} to keys chosen at random among {@code keys} shared ones, recording every PUT into a
 * history file of its own (erda-history's format; {@code System.nanoTime} is the machine's monotonic clock, which the
 * processes share). Its last line says what its client counted: {@code updates N cas_retries M}.
 *
 * <p>Arguments: server URI, process number, key prefix, keys, go file, duration (ms), history file.
 */
public final class SharedKeyWriter {
    /** Updates each process makes at the least, however long they take. */
    static final int MIN_UPDATES = 300;

    private SharedKeyWriter() {
    }

    public static void main(String[] args) throws Exception {
        URI uri = URI.create(args[0]);
        int process = Integer.parseInt(args[1]);
        String prefix = args[2];
        int keys = Integer.parseInt(args[3]);
        Path go = Path.of(args[4]);
        long millis = Long.parseLong(args[5]);
        try (ErdaClient client = ErdaClient.connect(ClientOptions.of(uri).withPoolSize(1));
             HistoryRecorder history = HistoryRecorder.appendingTo(Path.of(args[6]))) {
            SplittableRandom random = new SplittableRandom(process);
            System.out.println("ready");
            while (!Files.exists(go)) {
                Thread.sleep(1);
            }
            long end = System.nanoTime() + millis * 1_000_000;
            // at least MIN_UPDATES and the given time: in scripts/test-softroce's VM a cold JVM's first updates over
            // verbs take most of a second each, and two seconds once made two updates
            for (long seq = 1; seq <= MIN_UPDATES || System.nanoTime() - end < 0; seq++) {
                int k = random.nextInt(keys);
                long v = process * 1_000_000_000L + seq;
                long op = history.invokeWrite(process, "k" + k, v);
                client.put((prefix + k).getBytes(StandardCharsets.UTF_8), Long.toString(v).getBytes(StandardCharsets.UTF_8));
                history.ok(op);
            }
            System.out.println("updates " + client.stats().get("one_sided_updates") + " cas_retries "
                    + client.stats().get("cas_retries"));
        }
    }
}
