package io.erda.bench.faults;

import static org.assertj.core.api.Assertions.assertThat;

import io.erda.bench.backend.ServerProcess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A short campaign as a user runs it (its own JVM, real server and client processes on shm, power failures
 * emulated): it must inflict faults of every kind, have writes acknowledged, and end with the exact summary line, clean.
 */
class FaultCampaignTest {
    private static final Pattern LAST = Pattern.compile("faults (\\d+) \\(server kills (\\d+), client kills (\\d+), "
            + "power failures (\\d+), write faults (\\d+)\\), acknowledged writes (\\d+), lost (\\d+), torn (\\d+), stale (\\d+), "
            + "gets ok (\\d+) failed (\\d+), linearizable (yes|no|unknown)");

    @Test
    @Timeout(240)
    void aShortCampaignOnShmLosesNothingAndSaysSoInItsLastLine(@TempDir Path out) throws Exception {
        Campaign run = campaign("--minutes", "0.6", "--seed", "7", "--fabric", "shm", "--out", out.toString());
        String printed = run.printed();
        Matcher m = run.last();
        long faults = Long.parseLong(m.group(1));
        long sum = 0;
        for (int g = 2; g <= 5; g++) {
            sum += Long.parseLong(m.group(g));
        }
        assertThat(faults).as("the total counts broken connections and cleanings too").isGreaterThanOrEqualTo(sum);
        assertThat(Long.parseLong(m.group(2))).as("server kills").isPositive();
        assertThat(Long.parseLong(m.group(3))).as("client kills").isPositive();
        assertThat(Long.parseLong(m.group(4))).as("power failures").isPositive();
        assertThat(Long.parseLong(m.group(5))).as("write faults").isPositive();
        assertThat(Long.parseLong(m.group(6))).as("acknowledged writes").isGreaterThan(100);
        // most GETs fail, but while the server is down; the campaign's exit status holds the rule for the others
        assertThat(Long.parseLong(m.group(10))).as("GETs that succeeded").isPositive();
        assertThat(m.group(12)).isEqualTo("yes");
        assertThat(printed).containsPattern("fault-campaign: \\d+ s of 36, server kills"); // progress every few seconds
        // the seed's schedule cleans on a server armed to halt in that cleaning: one of its kills is that halt
        assertThat(printed).containsPattern("cleanings done and [1-9]\\d* halted in their run");
        // --judge on what it left gives the same verdict and the fault counts the histories record
        Matcher j = campaign("--judge", out.resolve("seed-7").toString()).last();
        for (int g : new int[] {2, 3, 4, 6, 7, 8, 9, 10, 11, 12}) { // not the totals: cleanings are not in the histories
            assertThat(j.group(g)).as("group %d of the judged line", g).isEqualTo(m.group(g));
        }
        try (var left = java.nio.file.Files.list(Path.of("/dev/shm"))) {
            assertThat(left.map(f -> f.getFileName().toString())).as("a finished campaign leaves nothing in /dev/shm")
                    .noneMatch(n -> n.startsWith("erda-campaign-7-"));
        }
    }

    /**
     * The taxonomy made a campaign's expectation: wsp in DMP with DDIO (a WRITE's completion says nothing of PM, and
     * nothing writes the object back) must lose acknowledged PUTs at the campaign's power failures, and the campaign
     * must fail saying so, the checker counting the losses.
     */
    @Test
    @Timeout(300)
    void aCampaignWithAMethodItsConfigurationDoesNotSupportReportsLosses(@TempDir Path out) throws Exception {
        Campaign run = campaign(1, "--minutes", "0.5", "--seed", "7", "--fabric", "shm", "--protocol", "erda",
                "--clients", "2", "--persistence", "wsp", "--pm-config", "DMP+DDIO+DRAM-RQWRB", "--out", out.toString());
        Matcher m = run.last();
        assertThat(Long.parseLong(m.group(4))).as("power failures").isPositive();
        assertThat(Long.parseLong(m.group(7)) + Long.parseLong(m.group(8)) + Long.parseLong(m.group(9)))
                .as("lost + torn + stale in:\n%s", run.printed()).isPositive();
        assertThat(m.group(12)).isEqualTo("no");
        assertThat(run.printed()).contains("fault-campaign: wsp in DMP+DDIO+DRAM-RQWRB incorrect: ")
                .containsPattern("fault-campaign: losses expected at power failures \\(wsp in DMP\\+DDIO\\+DRAM-RQWRB "
                        + "incorrect: [^)]*\\): lost \\d+, torn \\d+, stale \\d+, shown");
    }

    /** What a campaign process printed, and the matched summary line it ended with. */
    private record Campaign(String printed, Matcher last) {
    }

    /** Runs FaultCampaign with {@code args} in its own JVM; it must exit 0 with the summary line last. */
    private static Campaign campaign(String... args) throws Exception {
        return campaign(0, args);
    }

    /** Runs FaultCampaign with {@code args} in its own JVM; it must exit with {@code status}, the summary line last. */
    private static Campaign campaign(int status, String... args) throws Exception {
        List<String> command = new java.util.ArrayList<>(List.of(ServerProcess.javaExecutable(),
                "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                FaultCampaign.class.getName()));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String printed = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(printed).isEqualTo(status);
        String[] lines = printed.strip().split("\n");
        Matcher m = LAST.matcher(lines[lines.length - 1]);
        assertThat(m.matches()).as("last line of:\n" + printed).isTrue();
        return new Campaign(printed, m);
    }
}
