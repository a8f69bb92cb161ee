package io.erda.remotelog;

import io.erda.core.testing.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** The command end to end on a few cells: its table, its ratios and its last line. */
class RemoteLogBenchTest {
    @TempDir(factory = ShmTempDirFactory.class)
    Path work;

    @Test
    void printsEveryCellAndTheScenarioLine() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream previous = System.out;
        int exit;
        try {
            System.setOut(new PrintStream(bytes, true, StandardCharsets.UTF_8));
            exit = new CommandLine(new RemoteLogBench()).execute("--fabric", "tcp", "--records", "200",
                    "--failures", "30", "--work", work.toString(),
                    "--configurations", "DMP+DDIO+DRAM-RQWRB,WSP+!DDIO+PM-RQWRB",
                    "--methods", "write-send-flush,write-flush,write,send");
        } finally {
            System.setOut(previous);
        }
        String out = bytes.toString(StandardCharsets.UTF_8);
        assertThat(exit).as(out).isZero();
        assertThat(out).contains("DMP+DDIO+DRAM-RQWRB  write-send-flush *")
                .contains("WSP+!DDIO+PM-RQWRB   write *")
                .contains("WSP without Flush vs MHP: write / write-flush")
                .contains("[Erda server-flush; Intel GPSPM (GPRRM)]");
        // DMP+DDIO: write-send-flush correct, the other three not; WSP+PM: all four correct
        assertThat(out.lines().toList().getLast())
                .isEqualTo("remotelog scenarios 8, correct 5 (0 lost), incorrect shown 3, unobservable 0");
    }
}
