package io.erda.bench.faults;

import static io.erda.bench.faults.CampaignVerdict.DRIVER;
import static io.erda.history.Operation.ABSENT;
import static io.erda.history.Operation.Outcome.FAILED;
import static io.erda.history.Operation.Outcome.INDETERMINATE;
import static io.erda.history.Operation.Outcome.OK;
import static io.erda.history.Operation.read;
import static io.erda.history.Operation.write;
import static org.assertj.core.api.Assertions.assertThat;

import io.erda.history.History;
import io.erda.history.Operation;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The campaign's verdict on hand-written histories: client 0 writes w0k0, the driver notes the server's ups and downs
 * and reads back after a crash. Each rule must fail the history that breaks it.
 */
class CampaignVerdictTest {
    private static final String KEY = "w0k0";

    private static History.Note note(long at, String text) {
        return new History.Note(DRIVER, at, text);
    }

    /** Up from 0 to 1000, killed at 1000 and dead at 1005, read back until 1200, up again at 1300. */
    private static List<History.Note> oneCrash() {
        return List.of(note(0, CampaignVerdict.SERVER_UP), note(1000, CampaignVerdict.SERVER_DOWN + " kill"),
                note(1005, CampaignVerdict.SERVER_DEAD), note(1200, CampaignVerdict.READ_BACK_DONE),
                note(1300, CampaignVerdict.SERVER_UP));
    }

    @Test
    void aLinearizableCampaignWithItsFaultsIsClean() {
        List<Operation> ops = List.of(
                write(0, KEY, 1, 100, 110, OK),
                write(0, KEY, 2, 120, 130, INDETERMINATE),   // a dropped WRITE: may or may not have happened
                write(0, "w0k1", 5, 990, 1003, OK),          // acknowledged by the dying server
                read(0, KEY, 1, 140, 150, OK),
                write(0, KEY, ABSENT, 160, 170, OK),
                read(0, KEY, ABSENT, 180, 190, OK),
                write(0, KEY, 3, 900, Operation.NEVER, INDETERMINATE), // in flight at the crash
                read(0, KEY, 0, 950, 1100, FAILED),          // failed across the crash: not between faults
                read(DRIVER, KEY, 3, 1100, 1110, OK),        // ... but it had happened
                write(1000, KEY, 4, 1400, 1410, OK),         // the client's next incarnation
                read(1000, KEY, 4, 1420, 1430, OK));
        History h = new History(ops, concat(oneCrash(), List.of(new History.Note(0, 125, "write-fault drop w0k0"),
                new History.Note(0, 115, CampaignVerdict.BROKEN_CONNECTION))));
        CampaignVerdict.Result r = CampaignVerdict.judge(h);
        assertThat(r.problems()).isEmpty();
        assertThat(r.clean()).as(r.examples().toString()).isTrue();
        assertThat(r.acknowledged()).isEqualTo(4);
        assertThat(r.readBacks()).isEqualTo(1);
        assertThat(r.getsOk()).isEqualTo(3);
        assertThat(r.getsFailed()).isEqualTo(1);
        assertThat(r.getsBetweenFaults()).as("the GET the crash broke is not between faults").isEqualTo(3);
        assertThat(r.writeFaults()).isEqualTo(1);
        assertThat(r.brokenConnections()).isEqualTo(1);
    }

    @Test
    void aReadBackBeforeTheNextWriteCatchesALostAcknowledgedWrite() {
        List<Operation> ops = List.of(
                write(0, KEY, 1, 100, 110, OK),
                write(0, KEY, 2, 120, 130, OK),
                read(0, KEY, 2, 140, 150, OK),
                read(DRIVER, KEY, 1, 1100, 1110, OK),  // the crash lost seq 2
                write(1000, KEY, 3, 1400, 1410, OK),
                read(1000, KEY, 3, 1420, 1430, OK));
        CampaignVerdict.Result r = CampaignVerdict.judge(new History(ops, oneCrash()));
        assertThat(r.lost()).isEqualTo(1);
        assertThat(r.check().verdict()).isEqualTo("no");
        assertThat(r.clean()).isFalse();
        assertThat(r.examples()).anySatisfy(e -> assertThat(e).contains("lost: process 0 w0k0 write 2"));
    }

    @Test
    void aWriteAcknowledgedBeforeTheReadBackIsDoneFailsTheCampaignSinceItCouldMaskALoss() {
        // the same loss, but the client wrote seq 3 before the read-back: every read sees 3 and the history is
        // linearizable, so only the order of write and read-back can show that the campaign checked nothing
        List<Operation> ops = List.of(
                write(0, KEY, 1, 100, 110, OK),
                write(0, KEY, 2, 120, 130, OK),
                write(1000, KEY, 3, 1140, 1150, OK),
                read(DRIVER, KEY, 3, 1160, 1170, OK),
                read(1000, KEY, 3, 1420, 1430, OK));
        CampaignVerdict.Result r = CampaignVerdict.judge(new History(ops, oneCrash()));
        assertThat(r.check().verdict()).isEqualTo("yes");
        assertThat(r.problems()).singleElement().asString()
                .contains("acknowledged after the server died at 1005 and before its read-back was done at 1200")
                .contains("write 3");
        assertThat(r.clean()).isFalse();
    }

    @Test
    void aCampaignWhoseGetsBetweenFaultsMostlyFailFails() {
        List<Operation> ops = new ArrayList<>(List.of(write(0, KEY, 1, 100, 110, OK)));
        for (int i = 0; i < 10; i++) {
            ops.add(read(0, KEY, 1, 200 + 10L * i, 205 + 10L * i, i < 4 ? OK : FAILED));
        }
        for (int i = 0; i < 50; i++) { // failures while the server is down do not count
            ops.add(read(0, KEY, 0, 1010 + 2L * i, 1011 + 2L * i, FAILED));
        }
        CampaignVerdict.Result r = CampaignVerdict.judge(new History(ops, oneCrash()));
        assertThat(r.check().linearizable()).isTrue();
        assertThat(r.getsFailed()).isEqualTo(56);
        assertThat(r.getsBetweenFaults()).isEqualTo(10);
        assertThat(r.problems()).containsExactly("only 4 of 10 GETs between faults succeeded, fewer than half: a "
                + "campaign whose reads mostly fail checks little");
        assertThat(r.clean()).isFalse();

        List<Operation> half = new ArrayList<>(ops);
        half.set(5, read(0, KEY, 1, 240, 245, OK));
        assertThat(CampaignVerdict.judge(new History(half, oneCrash())).problems()).as("5 of 10 is half").isEmpty();
    }

    @Test
    void tornAndStaleGetsAreCountedAsSuch() {
        List<Operation> ops = List.of(
                write(0, KEY, 1, 100, 110, OK),
                write(0, KEY, 2, 120, 130, OK),
                read(0, KEY, CampaignValue.TORN, 140, 150, OK),
                read(0, KEY, 1, 160, 170, OK),
                read(0, KEY, 2, 180, 190, OK),
                read(0, KEY, 2, 900, 910, OK));
        CampaignVerdict.Result r = CampaignVerdict.judge(new History(ops, concat(oneCrash(),
                List.of(new History.Note(0, 150, "torn w0k0 torn: byte 30 of 100 differs from seq 1's")))));
        assertThat(r.torn()).isEqualTo(1);
        assertThat(r.stale()).isEqualTo(1);
        assertThat(r.lost()).isZero();
        assertThat(r.examples()).anySatisfy(e -> assertThat(e).contains("torn w0k0 torn: byte 30"));
        assertThat(r.clean()).isFalse();
    }

    private static <T> List<T> concat(List<T> a, List<T> b) {
        List<T> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }
}
