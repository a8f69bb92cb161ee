package io.erda.remotelog;

import io.erda.core.testing.ShmTempDirFactory;
import io.erda.protocol.PmConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** Power failures on real fabrics: correct cells lose nothing, incorrect ones are shown losing appends. */
class PowerFailuresTest {
    private static final LogLayout LAYOUT = new LogLayout(64, 4096);

    @TempDir(factory = ShmTempDirFactory.class)
    Path work;

    @ParameterizedTest
    @ValueSource(strings = {"shm", "tcp"})
    void writeFlushLosesNothingInMhp(String fabric) throws Exception {
        try (RemoteLog log = RemoteLog.open(fabric, work, LAYOUT)) {
            PowerFailures.Outcome o = PowerFailures.run(log, PmConfiguration.parse("MHP+DDIO+DRAM-RQWRB"),
                    Method.WRITE_FLUSH, 40, 1);
            assertThat(o.acknowledged()).isGreaterThan(100);
            assertThat(o.lost()).isZero();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"shm", "tcp"})
    void writeWithoutFlushLosesAppendsInMhp(String fabric) throws Exception {
        try (RemoteLog log = RemoteLog.open(fabric, work, LAYOUT)) {
            PowerFailures.Outcome o = PowerFailures.run(log, PmConfiguration.parse("MHP+DDIO+DRAM-RQWRB"),
                    Method.WRITE, 40, 1);
            assertThat(o.lost()).isPositive();
        }
    }

    @Test
    void writeWithoutFlushLosesNothingInWsp() throws Exception {
        try (RemoteLog log = RemoteLog.open("shm", work, LAYOUT)) {
            PowerFailures.Outcome o = PowerFailures.run(log, PmConfiguration.parse("WSP+DDIO+DRAM-RQWRB"),
                    Method.WRITE, 40, 2);
            assertThat(o.lost()).isZero();
        }
    }

    @Test
    void theResponderFlushSavesDmpWithDdioWhereTheRdmaFlushDoesNot() throws Exception {
        PmConfiguration dmpDdio = PmConfiguration.parse("DMP+DDIO+PM-RQWRB");
        try (RemoteLog log = RemoteLog.open("shm", work, LAYOUT)) {
            assertThat(PowerFailures.run(log, dmpDdio, Method.WRITE_SEND_FLUSH, 40, 3).lost()).isZero();
            assertThat(PowerFailures.run(log, dmpDdio, Method.WRITE_FLUSH, 40, 3).lost()).isPositive();
        }
    }

    @Test
    void compoundCellsAreJudgedByTheirTailPointer() throws Exception {
        try (RemoteLog log = RemoteLog.open("shm", work, LAYOUT)) {
            assertThat(PowerFailures.run(log, PmConfiguration.parse("MHP+DDIO+PM-RQWRB"), Method.SEND_AB_FLUSH, 40, 4)
                    .lost()).isZero();
            assertThat(PowerFailures.run(log, PmConfiguration.parse("DMP+!DDIO+DRAM-RQWRB"),
                    Method.WRITE_FLUSH_ATOMIC_FLUSH, 40, 4).lost()).isZero();
            assertThat(PowerFailures.run(log, PmConfiguration.parse("DMP+DDIO+DRAM-RQWRB"), Method.WRITE_WRITE_FLUSH,
                    40, 4).lost()).isPositive();
        }
    }

    @Test
    void onIwarpAWriteCompletionIsNotEnoughEvenInWsp() throws Exception {
        PmConfiguration wsp = PmConfiguration.parse("WSP+!DDIO+PM-RQWRB");
        try (RemoteLog log = RemoteLog.open("shm", work, LAYOUT)) {
            assertThat(PowerFailures.run(log, wsp, Transport.IWARP, Method.WRITE, 40, 7).lost()).isPositive();
            assertThat(PowerFailures.run(log, wsp, Transport.IWARP, Method.WRITE_FLUSH, 40, 7).lost()).isZero();
        }
    }
}
