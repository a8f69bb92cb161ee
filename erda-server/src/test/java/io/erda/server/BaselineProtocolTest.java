package io.erda.server;

import static io.erda.server.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.protocol.ConnectData;
import io.erda.protocol.RawReserveReply;
import io.erda.protocol.WireStatus;
import io.erda.server.baseline.RedoLog;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The baselines' asynchronous apply, seen from the wire: a GET sees a PUT the server has not applied yet, an
 * acknowledged (redo) or forced (ring) PUT that was never applied survives a restart, and a ring slot whose writer
 * never wrote is recycled once its lease runs out.
 */
class BaselineProtocolTest extends RunningServer {

    private RawClient connect(int protocol) {
        return RawClient.connect(server.uri(), protocol);
    }

    /** Starts the server with {@code held}'s threads held, and connects an Erda client to it. */
    private RawClient startHeld(String scheme, HeldThreads held) {
        server = RequestServer.start(TestStores.config(dir, scheme, Duration.ofSeconds(30)), held.hooks());
        return RawClient.connect(server.uri());
    }

    private long stat(String name) {
        return TestStores.stat(server, name);
    }

    /** Stops the server as a crash would leave its PM: nothing pending is applied on the way down. */
    private void crashAndRestart(String scheme) {
        server.close();
        server = RequestServer.start(TestStores.config(dir, scheme, Duration.ofSeconds(30)));
    }

    @ParameterizedTest
    @MethodSource("io.erda.server.TestStores#schemes")
    void redoGetSeesAnAcknowledgedPutBeforeItIsApplied(String scheme) {
        HeldThreads held = new HeldThreads("erda-redo-applier");
        try (RawClient erda = startHeld(scheme, held); RawClient redo = connect(ConnectData.PROTOCOL_REDO_LOG)) {
            erda.putAndWrite(bytes("k"), bytes("applied"));
            assertThat(redo.redoPut(bytes("k"), bytes("pending")).status()).isEqualTo(WireStatus.OK);
            assertThat(redo.redoPut(bytes("gone"), null).status()).isEqualTo(WireStatus.OK);
            assertThat(stat("redo_pending")).isEqualTo(2);
            assertThat(redo.getString(bytes("k"))).isEqualTo("pending");
            assertThat(erda.getString(bytes("k"))).as("the table still holds the applied version").isEqualTo("applied");
            held.release();
            awaitApplied("redo_pending");
            assertThat(erda.getString(bytes("k"))).isEqualTo("pending");
        }
    }

    @ParameterizedTest
    @MethodSource("io.erda.server.TestStores#schemes")
    void redoEntryAcknowledgedButNotAppliedIsReplayedAfterACrash(String scheme) {
        try (RawClient erda = startHeld(scheme, new HeldThreads("erda-redo-applier"));
             RawClient redo = connect(ConnectData.PROTOCOL_REDO_LOG)) {
            erda.putAndWrite(bytes("a"), bytes("old"));
            erda.putAndWrite(bytes("d"), bytes("deleted later"));
            assertThat(redo.redoPut(bytes("a"), bytes("acknowledged")).status()).isEqualTo(WireStatus.OK);
            assertThat(redo.redoPut(bytes("b"), bytes("created")).status()).isEqualTo(WireStatus.OK);
            assertThat(redo.redoPut(bytes("d"), null).status()).isEqualTo(WireStatus.OK);
        }
        crashAndRestart(scheme);
        try (RawClient erda = RawClient.connect(server.uri())) {
            assertThat(stat("redo_replayed")).isEqualTo(3);
            assertThat(erda.getString(bytes("a"))).isEqualTo("acknowledged");
            assertThat(erda.getString(bytes("b"))).isEqualTo("created");
            assertThat(erda.getString(bytes("d"))).isNull();
        }
        crashAndRestart(scheme);
        assertThat(stat("redo_replayed")).as("applied entries are not replayed twice").isZero();
    }

    @ParameterizedTest
    @MethodSource("io.erda.server.TestStores#schemes")
    void ringGetSeesAForcedPutBeforeThePollerAppliesIt(String scheme) {
        HeldThreads held = new HeldThreads("erda-ring-poller");
        try (RawClient erda = startHeld(scheme, held);
             RawClient raw = connect(ConnectData.PROTOCOL_READ_AFTER_WRITE)) {
            erda.putAndWrite(bytes("k"), bytes("applied"));
            raw.rawPut(bytes("k"), bytes("forced"));
            assertThat(stat("ring_pending")).isEqualTo(1);
            assertThat(raw.getString(bytes("k"))).isEqualTo("forced");
            assertThat(erda.getString(bytes("k"))).isEqualTo("applied");
            held.release();
            awaitApplied("ring_pending");
            assertThat(erda.getString(bytes("k"))).isEqualTo("forced");
        }
    }

    @ParameterizedTest
    @MethodSource("io.erda.server.TestStores#schemes")
    void ringSlotForcedButNotAppliedIsReplayedAfterACrash(String scheme) {
        try (RawClient erda = startHeld(scheme, new HeldThreads("erda-ring-poller"));
             RawClient raw = connect(ConnectData.PROTOCOL_READ_AFTER_WRITE)) {
            erda.putAndWrite(bytes("a"), bytes("old"));
            raw.rawPut(bytes("a"), bytes("forced"));
            raw.rawPut(bytes("b"), bytes("created"));
            raw.rawReserve(bytes("c"), 5); // reserved, never written: nothing to replay
        }
        crashAndRestart(scheme);
        try (RawClient erda = RawClient.connect(server.uri())) {
            assertThat(stat("ring_replayed")).isEqualTo(2);
            assertThat(erda.getString(bytes("a"))).isEqualTo("forced");
            assertThat(erda.getString(bytes("b"))).isEqualTo("created");
            assertThat(erda.getString(bytes("c"))).isNull();
        }
        crashAndRestart(scheme);
        assertThat(stat("ring_replayed")).as("applied slots are not replayed twice").isZero();
    }

    @ParameterizedTest
    @MethodSource("io.erda.server.TestStores#schemes")
    void ringSlotNeverWrittenIsRecycledAfterItsLeaseAndLaterPutsApply(String scheme) {
        server = RequestServer.start(TestStores.config(dir, scheme, Duration.ofMillis(200)));
        try (RawClient raw = connect(ConnectData.PROTOCOL_READ_AFTER_WRITE)) {
            raw.rawReserve(bytes("dead"), 10);
            int attempts = raw.rawPut(bytes("after"), bytes("applied once the dead slot expired"));
            awaitApplied("ring_pending");
            // the dead slot expired and the last attempt was applied; an earlier attempt slower than the 200 ms lease
            // (a slow VM) was applied or recycled, as its WRITE came before or after the poller's look
            assertThat(stat("ring_expired")).isBetween(1L, (long) attempts);
            assertThat(stat("ring_applied")).isBetween(1L, (long) attempts);
            assertThat(stat("ring_expired") + stat("ring_applied")).isEqualTo(1 + attempts);
            assertThat(raw.getString(bytes("dead"))).isNull();
            assertThat(raw.getString(bytes("after"))).isEqualTo("applied once the dead slot expired");
        }
    }

    @ParameterizedTest
    @MethodSource("io.erda.server.TestStores#schemes")
    void aRingWriterThatOutlivedItsLeaseIsNeverAppliedOverNewerPutsNotEvenAfterACrash(String scheme) {
        server = RequestServer.start(TestStores.config(dir, scheme, Duration.ofMillis(200)));
        try (RawClient raw = connect(ConnectData.PROTOCOL_READ_AFTER_WRITE)) {
            raw.rawPut(bytes("k"), bytes("v1"));
            RawReserveReply late = raw.rawReserve(bytes("k"), "late".length());
            // the writer is slower than its lease: its slot, never written, can only be recycled unapplied
            awaitApplied("ring_pending");
            assertThat(stat("ring_expired")).isPositive();
            raw.rawPut(bytes("k"), bytes("v2, acknowledged after the lease ran out"));
            awaitApplied("ring_pending");
            raw.rawWriteSlot(late, bytes("k"), bytes("late")); // the late WRITE lands in the recycled slot
            assertThat(raw.getString(bytes("k"))).isEqualTo("v2, acknowledged after the lease ran out");
        }
        crashAndRestart(scheme);
        assertThat(stat("ring_replayed")).as("the late object names a recycled position").isZero();
        try (RawClient erda = RawClient.connect(server.uri())) {
            assertThat(erda.getString(bytes("k"))).isEqualTo("v2, acknowledged after the lease ran out");
        }
    }

    @ParameterizedTest
    @MethodSource("io.erda.server.TestStores#schemes")
    void aRedoConnectionBeyondTheLanesIsRefusedSayingWhyAndTheServerServesOn(String scheme) {
        java.util.List<RawClient> lanes = new java.util.ArrayList<>();
        try (RawClient erda = start(scheme)) {
            for (int i = 0; i < RedoLog.LANES; i++) {
                lanes.add(connect(ConnectData.PROTOCOL_REDO_LOG));
            }
            assertThatThrownBy(() -> connect(ConnectData.PROTOCOL_REDO_LOG).close())
                    .hasMessageContaining("rejected")
                    .hasMessageContaining("no free lane: all " + RedoLog.LANES);
            erda.putAndWrite(bytes("still"), bytes("serving"));
            assertThat(erda.getString(bytes("still"))).isEqualTo("serving");
        } finally {
            lanes.forEach(RawClient::close);
        }
    }

    /** Waits (bounded) until the counter of pending writes is 0. */
    private void awaitApplied(String pendingCounter) {
        long giveUp = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (stat(pendingCounter) != 0) {
            assertThat(System.nanoTime() - giveUp).as("%s never drained", pendingCounter).isNegative();
            Thread.onSpinWait();
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }
}
