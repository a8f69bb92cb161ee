package io.erda.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.erda.bench.backend.ServerProcess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A short nemesis run as a user runs it (its own JVM; ZooKeeper and members as processes in network namespaces): it
 * must inject every kind of fault, have writes acknowledged, end with the exact summary line and exit 0. Needs root
 * for the namespaces (skipped saying so otherwise; CI runs as root).
 */
class ClusterNemesisTest {
    private static final Pattern LAST = Pattern.compile("nemesis faults (\\d+) \\(kills (\\d+), pauses (\\d+), "
            + "partitions (\\d+)\\), operations (\\d+) \\(ok (\\d+), failed (\\d+), indeterminate (\\d+)\\), "
            + "linearizable (yes|no|unknown), stale (\\d+), lost (\\d+)");
    private static final Pattern KINDS = Pattern.compile("nemesis: zookeeper restarts (\\d+); partitions "
            + "primary\\|zookeeper (\\d+), reader\\|zookeeper (\\d+), primary\\|backup (\\d+), client\\|primary (\\d+);.*");

    @Test
    @Timeout(300)
    void aShortRunInjectsEveryKindOfFaultAndFindsTheHistoryLinearizable(@TempDir Path out) throws Exception {
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")),
                "needs root to make network namespaces (user is " + System.getProperty("user.name") + ")");
        List<String> command = List.of(ServerProcess.javaExecutable(), "--enable-native-access=ALL-UNNAMED",
                "-cp", System.getProperty("java.class.path"), ClusterNemesis.class.getName(),
                "--minutes", "0.5", "--seed", "3", "--out", out.toString());
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String printed = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String[] lines = printed.strip().split("\n");
        Matcher m = LAST.matcher(lines[lines.length - 1]);
        assertThat(m.matches()).as("last line of:\n" + printed).isTrue();
        Matcher kinds = KINDS.matcher(lines[lines.length - 2]);
        assertThat(kinds.matches()).as("the line before the last of:\n" + printed).isTrue();
        assertThat(p.exitValue()).as(printed).isZero();
        assertThat(Long.parseLong(m.group(2))).as("kills").isPositive();
        assertThat(Long.parseLong(m.group(3))).as("pauses").isPositive();
        for (int g = 1; g <= 5; g++) {
            assertThat(Long.parseLong(kinds.group(g))).as("zookeeper restarts, then each kind of partition: " + g)
                    .isPositive();
        }
        long partitions = Long.parseLong(kinds.group(2)) + Long.parseLong(kinds.group(3))
                + Long.parseLong(kinds.group(4)) + Long.parseLong(kinds.group(5));
        assertThat(Long.parseLong(m.group(4))).isEqualTo(partitions);
        assertThat(Long.parseLong(m.group(1))).as("F counts the ZooKeeper restarts too").isEqualTo(
                Long.parseLong(m.group(2)) + Long.parseLong(m.group(3)) + partitions + Long.parseLong(kinds.group(1)));
        assertThat(Long.parseLong(m.group(6))).as("operations that succeeded").isGreaterThan(100);
        assertThat(printed).containsPattern("nemesis: \\d+ s of 30, operations \\d+"); // progress every few seconds
        String namespaces = new String(new ProcessBuilder("ip", "netns", "list").start().getInputStream().readAllBytes(),
                StandardCharsets.UTF_8);
        assertThat(namespaces).as("a finished run leaves no namespace").doesNotContain(NemesisNetwork.PREFIX
                + p.pid() + "-");
    }
}
