package io.erda.server.store;

import io.erda.core.pm.WriteLatencyModel;
import io.erda.core.table.HopscotchTable;
import io.erda.core.testing.CasClient;
import io.erda.core.testing.ShmTempDirFactory;
import io.erda.core.testing.TableChurn;
import io.erda.core.testing.WordHistory;
import io.erda.fabric.Access;
import io.erda.fabric.ConnectionRequest;
import io.erda.fabric.Endpoint;
import io.erda.fabric.EndpointOptions;
import io.erda.fabric.Fabric;
import io.erda.fabric.Listener;
import io.erda.fabric.MemoryRegion;
import io.erda.fabric.RegisterOptions;
import io.erda.fabric.SyncEndpoint;
import io.erda.protocol.memory.AtomicWord;
import io.erda.protocol.memory.HashEntryLayout;
import io.erda.protocol.memory.TableGeometry;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import io.erda.server.TestStores;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The table's word changes through the server's own device ({@link LoopbackWordCas}) against a client's remote CASes
 * on the same words: the path a server takes where the device's atomics are atomic only among its own (verbs on rxe0,
 * {@code IBV_ATOMIC_HCA}, in scripts/test-softroce's store-server-protocol group), and over tcp on the host.
 */
class LoopbackWordCasTest {
    private static final int KEY_SHIFT = 20;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private Fabric server;
    private Fabric client;
    private HopscotchTable table;
    private LoopbackWordCas loopback;
    private MemoryRegion clientView;
    private Listener listener;
    private final List<AutoCloseable> toClose = new ArrayList<>();

    /** The network fabrics selected (erda.test.fabrics): a loopback connection needs one. */
    static Stream<String> networkFabrics() {
        return TestStores.schemes().stream().filter(s -> !s.equals("shm"));
    }

    private void open(String scheme) throws Exception {
        URI anyPort = TestStores.anyPort(scheme);
        server = Fabric.open(anyPort);
        client = Fabric.open(anyPort);
        table = HopscotchTable.create(dir.resolve("table.pm"), TableGeometry.forCapacity(1024, 8), WriteLatencyModel.OFF);
        loopback = LoopbackWordCas.open(server, table.region(), anyPort);
        table.useWordCas(loopback);
        clientView = server.register(table.region().data(), RegisterOptions.of(EnumSet.of(Access.REMOTE_READ,
                Access.REMOTE_ATOMIC)));
        listener = server.listen(anyPort);
    }

    @AfterEach
    void close() throws Exception {
        if (server == null) {
            return;
        }
        for (AutoCloseable c : toClose.reversed()) {
            c.close();
        }
        listener.close();
        clientView.close();
        loopback.close();
        table.close();
        client.close();
        server.close();
    }

    /** A client's connection to the server's fabric, for remote CASes on the table. */
    private SyncEndpoint connectClient() throws Exception {
        Endpoint endpoint = client.createEndpoint(EndpointOptions.defaults());
        toClose.add(endpoint);
        Thread connector = Thread.ofPlatform().start(() -> endpoint.connect(listener.uri(), new byte[0]));
        ConnectionRequest request = listener.accept(10, TimeUnit.SECONDS);
        assertThat(request).isNotNull();
        Endpoint accepted = server.createEndpoint(EndpointOptions.defaults());
        toClose.add(accepted);
        request.accept(accepted, new byte[0]);
        connector.join(10_000);
        assertThat(endpoint.state()).isEqualTo(Endpoint.State.CONNECTED);
        SyncEndpoint sync = new SyncEndpoint(endpoint);
        toClose.add(sync);
        return sync;
    }

    @ParameterizedTest
    @MethodSource("networkFabrics")
    void theServersCasThroughItsDeviceWinsFromTheWordAndLosesFromAStaleOne(String scheme) throws Exception {
        open(scheme);
        long first = AtomicWord.initial(5);
        int position = table.insert(77, 0, first);
        SyncEndpoint remote = connectClient();
        long clients = AtomicWord.withNewVersion(first, 6);
        long offset = table.geometry().bucketOffset(position) + HashEntryLayout.ATOMIC_WORD_OFFSET;
        assertThat(remote.compareAndSwap(clientView.address() + offset, clientView.rkey(), first, clients)).isEqualTo(first);

        assertThat(table.compareAndSetAtomicWord(position, first, AtomicWord.withNewVersion(first, 7))).isFalse();
        assertThat(table.remove(position, first)).isFalse();
        long servers = AtomicWord.withNewVersion(clients, 8);
        assertThat(table.compareAndSetAtomicWord(position, clients, servers)).isTrue();
        assertThat(table.atomicWord(position)).isEqualTo(servers);
        assertThat(table.remove(position, servers)).isTrue();
        assertThat(table.atomicWord(position)).as("cleared through the device too").isZero();
        assertThat(table.count()).isZero();
    }

    /**
     * The server flips the words of the keys a client updates at the same time (as a PUT's flip would), both by CAS
     * from the word they read, the server's through its device: no change either wins is lost, and the CASes did
     * race (a loser retried), or the test would show nothing.
     */
    @ParameterizedTest
    @MethodSource("networkFabrics")
    void serverAndClientUpdatesOfTheSameWordsLoseNone(String scheme) throws Exception {
        open(scheme);
        int updates = 600;
        Keys keys = insertKeys(4, new Random(5), 0);
        CasClient client = remoteCasClient("client");
        CasClient serverSide = new CasClient(table, "server", loopback);
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Thread flips = Thread.ofPlatform().name("server-flips").start(() -> {
            try {
                updateRandomKeys(serverSide, keys, updates, new Random(6), 2);
            } catch (Throwable t) {
                failed.set(t);
            }
        });
        updateRandomKeys(client, keys, updates, new Random(7), 1);
        flips.join();
        assertThat(failed.get()).as("the server's updates").isNull();
        assertEveryHistoryIsOneChain(keys);
        System.out.println("server flips vs remote CAS on " + server.capabilities().device() + ": " + updates
                + " updates each; the client lost and retried " + client.lost() + ", the server " + serverSide.lost());
        assertThat(client.lost() + serverSide.lost()).as("CASes lost and retried (the two raced)").isPositive();
    }

    /**
     * {@code updates} updates of random keys; the n-th names offset {@code 2n + parity} of its key, so the two writers'
     * words never repeat.
     */
    private void updateRandomKeys(CasClient writer, Keys keys, int updates, Random random, int parity) {
        for (int i = 0; i < updates; i++) {
            int key = 1 + random.nextInt(keys.count());
            CasClient.Locator locator = locator(keys.hashes()[key], key);
            assertThat(writer.update(locator, (long) key << KEY_SHIFT | (2L * i + parity), keys.histories()[key])).isTrue();
        }
    }

    @ParameterizedTest
    @MethodSource("networkFabrics")
    void remoteCasesAreNeverLostToInsertsAndRemovalsThroughTheDevice(String scheme) throws Exception {
        open(scheme);
        int updates = 1500;
        Random random = new Random(3);
        Keys keys = insertKeys(64, random, 1);
        CasClient casClient = remoteCasClient("remote client");
        TableChurn serverSide = new TableChurn(table, 4, 500, 700, 1L << 30);
        long[] sequence = new long[keys.count() + 1];
        for (int i = 0; i < updates; i++) {
            int k = 1 + random.nextInt(keys.count());
            CasClient.Locator locator = locator(keys.hashes()[k], k);
            assertThat(casClient.update(locator, (long) k << KEY_SHIFT | (++sequence[k] + 1), keys.histories()[k])).isTrue();
        }
        long serverChanges = serverSide.stop();
        assertThat(serverChanges).as("inserts and removals through the device").isPositive();
        assertEveryHistoryIsOneChain(keys);
        System.out.println("loopback vs remote CAS on " + server.capabilities().device() + " (atomicity "
                + server.capabilities().atomicity() + "): " + updates + " remote updates, " + casClient.lost()
                + " lost and retried; " + serverChanges + " inserts and removals through the device");
    }

    /** Finds key {@code key}'s entry (its words name offsets {@code key << KEY_SHIFT | n}): position and word. */
    private CasClient.Locator locator(long hash, int key) {
        return () -> {
            long[] found = new long[2];
            int position = table.lookup(hash, (p, word, h) -> {
                found[1] = word;
                return AtomicWord.current(word) >>> KEY_SHIFT == key;
            });
            found[0] = position;
            return position < 0 ? null : found;
        };
    }

    /** Keys 1 to {@code count()}: each one's hash and the history of its word (index 0 unused). */
    private record Keys(long[] hashes, WordHistory[] histories) {
        int count() {
            return hashes.length - 1;
        }
    }

    /** Inserts keys 1 to {@code count} with hashes from {@code random}, each word first naming {@code key | first}. */
    private Keys insertKeys(int count, Random random, long first) {
        Keys keys = new Keys(new long[count + 1], new WordHistory[count + 1]);
        for (int k = 1; k <= count; k++) {
            keys.hashes()[k] = random.nextLong();
            long word = AtomicWord.initial((long) k << KEY_SHIFT | first);
            table.insert(keys.hashes()[k], 0, word);
            keys.histories()[k] = new WordHistory(word);
        }
        return keys;
    }

    /** A client connected to the server's fabric whose CASes on the table are remote ones. */
    private CasClient remoteCasClient(String name) throws Exception {
        SyncEndpoint remote = connectClient();
        return new CasClient(table, name, (dataOffset, expected, replacement) ->
                remote.compareAndSwap(clientView.address() + dataOffset, clientView.rkey(), expected, replacement) == expected);
    }

    /** Each key's changes form one chain from its first word to the word its entry holds now: none was lost. */
    private void assertEveryHistoryIsOneChain(Keys keys) {
        for (int k = 1; k <= keys.count(); k++) {
            long[] found = locator(keys.hashes()[k], k).locate();
            assertThat(found).as("key %d's entry", k).isNotNull();
            assertThat(keys.histories()[k].anomaly(found[1])).as("key %d", k).isNull();
        }
    }
}
