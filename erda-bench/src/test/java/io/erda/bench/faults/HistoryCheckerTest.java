package io.erda.bench.faults;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The checker on hand-written histories: it must see every kind of violation, and accept what faults allow. */
class HistoryCheckerTest {
    @TempDir
    Path dir;

    private HistoryChecker.Result check(String writer, String reader) throws IOException {
        Path w = dir.resolve("client-0-0.history");
        Path r = dir.resolve("read-back.history");
        Files.writeString(w, writer);
        Files.writeString(r, reader);
        return HistoryChecker.check(List.of(w, r));
    }

    @Test
    void aReadOfTheLastAcknowledgedVersionOrANewerInvokedOneIsClean() throws IOException {
        HistoryChecker.Result r = check("""
                P w0k0 1 100
                A w0k0 1 110
                P w0k0 2 120
                E w0k0 2 130 FabricException: server gone
                G w0k0 140 150 1
                G w0k0 160 170 2
                W drop
                B
                """, "R w0k0 125 300 2\n");
        assertThat(r.acknowledged()).isEqualTo(1);
        assertThat(r.gets()).isEqualTo(2);
        assertThat(r.readBacks()).isEqualTo(1);
        assertThat(r.writeFaults()).isEqualTo(1);
        assertThat(r.brokenConnections()).isEqualTo(1);
        assertThat(r.lost() + r.torn() + r.stale()).as(r.examples().toString()).isZero();
    }

    @Test
    void aReadOlderThanAnAcknowledgementBeforeItBeganIsStaleAndAfterACrashLost() throws IOException {
        HistoryChecker.Result r = check("""
                P w0k0 1 100
                A w0k0 1 110
                P w0k0 2 120
                A w0k0 2 130
                G w0k0 125 126 1
                G w0k0 140 150 1
                """, "R w0k0 200 300 1\nR w0k0 200 300 null\n");
        assertThat(r.stale()).as("the GET at 125 began before seq 2 was acknowledged: only the one at 140 is stale")
                .isEqualTo(1);
        assertThat(r.lost()).isEqualTo(2);
        assertThat(r.torn()).isZero();
        assertThat(r.examples()).anyMatch(e -> e.startsWith("lost (acknowledged seq 2)"));
    }

    @Test
    void bytesNoPutWroteWholeAreTorn() throws IOException {
        HistoryChecker.Result r = check("""
                P w0k0 1 100
                A w0k0 1 110
                D w0k0 2 200
                A w0k0 2 210
                G w0k0 120 130 BAD torn: byte 30 of 100 differs from seq 1's
                G w0k0 120 130 7
                P w0k0 3 500
                G w0k0 120 130 3
                G w0k0 220 230 2
                """, "");
        assertThat(r.torn()).as("a bad value, a seq never PUT, one PUT after the read, a DELETE's seq").isEqualTo(4);
        assertThat(r.stale()).isZero();
    }

    @Test
    void absenceIsExplainedOnlyByAnAcknowledgedOrLaterInvokedDelete() throws IOException {
        HistoryChecker.Result r = check("""
                P w0k0 1 100
                A w0k0 1 110
                G w0k0 120 130 null
                D w0k0 2 140
                X w0k0 2 150 drop
                G w0k0 160 170 null
                D w0k0 3 200
                A w0k0 3 210
                G w0k0 220 230 null
                G w0k0 220 230 1
                """, "");
        assertThat(r.stale()).as("null at 120 (nothing deleted), seq 1 after the DELETE was acknowledged").isEqualTo(2);
        assertThat(r.torn()).isZero();
    }

    @Test
    void aLastLineCutShortByAKillIsIgnored() throws IOException {
        HistoryChecker.Result r = check("P w0k0 1 100\nA w0k0 1 110\nG w0k0 120 130 BAD tor", "");
        assertThat(r.gets()).isZero();
        assertThat(r.torn()).isZero();
        assertThat(r.acknowledged()).isEqualTo(1);
    }
}
