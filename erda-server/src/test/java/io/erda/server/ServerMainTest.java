package io.erda.server;

import io.erda.core.testing.ShmTempDirFactory;
import io.erda.server.store.CleanThreshold;
import io.erda.server.store.Store;
import io.erda.server.store.StoreStats;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import org.junit.jupiter.api.io.TempDir;

/** The command line: help, refusals with clear messages, and the offline commands' exit codes. */
class ServerMainTest {
    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(String... args) {
        return ErdaServerMain.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
    }

    @Test
    void helpDocumentsEveryOption() {
        assertThat(run("--help")).isZero();
        assertThat(out.toString()).contains("--dir", "--ephemeral", "--listen", "--heads", "--table-capacity",
                "--region-size", "--segment-size", "--persistence", "--lease-ms", "--pm-write-latency-ns", "--workers", "--group",
                "verify", "rebuild", "server-flush");
    }

    @Test
    void theLogIsCleanedByDefaultAndHelpSaysWhen() {
        assertThat(run("--help")).isZero();
        assertThat(out.toString()).contains("--clean-threshold", "auto (the default)", "live bytes", "0: never");
        CommandLine cli = ErdaServerMain.commandLine(new PrintWriter(out, true), new PrintWriter(err, true));
        cli.parseArgs("--dir", dir.toString());
        ServerConfig config = ((ErdaServerMain) cli.getCommand()).config(dir);
        assertThat(config.cleanThreshold()).isEqualTo(CleanThreshold.AUTO);
        cli.parseArgs("--dir", dir.toString(), "--clean-threshold", "0");
        assertThat(((ErdaServerMain) cli.getCommand()).config(dir).cleanThreshold()).isEqualTo(CleanThreshold.OFF);
    }

    @Test
    void theCleanThresholdOptionTakesAutoOrASizeAndNamesABadValue() {
        ServerOptions.CleanThresholdConverter threshold = new ServerOptions.CleanThresholdConverter();
        assertThat(threshold.convert("auto")).isEqualTo(CleanThreshold.AUTO);
        assertThat(threshold.convert("AUTO")).isEqualTo(CleanThreshold.AUTO);
        assertThat(threshold.convert("192m")).isEqualTo(CleanThreshold.of(192L << 20));
        assertThat(threshold.convert("0")).isEqualTo(CleanThreshold.OFF);
        assertThatThrownBy(() -> threshold.convert("-5")).hasMessageContaining("-5")
                .hasMessageContaining("negative");
        assertThatThrownBy(() -> threshold.convert("often")).isInstanceOf(CommandLine.TypeConversionException.class)
                .hasMessageContaining("'often' is not a size");
    }

    @Test
    void aBadCleanThresholdIsRefusedNamingIt() {
        assertThat(run("--dir", dir.resolve("s").toString(), "--clean-threshold", "-1m")).isEqualTo(2);
        assertThat(err.toString()).contains("-1m", "negative");
        assertThat(run("--dir", dir.resolve("s").toString(), "--region-pool", "-2")).isEqualTo(2);
        assertThat(err.toString()).contains("region pool -2 is negative");
    }

    @Test
    void anArgumentStartingWithAtIsAValueNotAnArgumentFile() {
        // found by ServerCliFuzzTest's sibling in erda-client: picocli expanded "@/" and printed a stack trace
        assertThat(run("--listen", "@/")).isEqualTo(2);
        assertThat(err.toString()).contains("a PM directory is required").doesNotContain("\tat ");
    }

    @Test
    void aMissingDirectoryIsRefused() {
        assertThat(run("--listen", "tcp://127.0.0.1:0")).isEqualTo(2);
        assertThat(err.toString()).contains("a PM directory is required");
    }

    @Test
    void anUnknownPersistenceMethodIsRefusedNamingIt() {
        assertThat(run("--dir", dir.resolve("s").toString(), "--persistence", "eventually")).isEqualTo(2);
        assertThat(err.toString()).contains("persistence method 'eventually' is not one of wsp, read-after-write, server-flush");
    }

    @Test
    void aStoreOfAnotherGeometryIsRefusedWithTheMessage() {
        ServerConfig config = TestStores.config(dir, "tcp", Duration.ofSeconds(1));
        try (Store store = config.openStore(new StoreStats())) {
            TestStores.put(store, "k", "v");
        }
        assertThat(run("--dir", config.directory().toString(), "--listen", "tcp://127.0.0.1:0", "--heads", "3"))
                .isEqualTo(2);
        assertThat(err.toString()).contains("head count 2, expected 3");
    }

    @Test
    void verifyExitsZeroOnACleanStoreAndRebuildReports() {
        ServerConfig config = TestStores.config(dir, "tcp", Duration.ofSeconds(1));
        try (Store store = config.openStore(new StoreStats())) {
            TestStores.put(store, "k", "v");
        }
        assertThat(run("verify", "--dir", config.directory().toString())).isZero();
        assertThat(out.toString()).contains("1 entries", "clean");
        assertThat(run("rebuild", "--dir", config.directory().toString())).isZero();
        assertThat(out.toString()).contains("rebuild", "1 keys");
    }

    @Test
    void aStoreOtherUsersCouldWriteIsRefusedNamingPathModeAndOwner() throws Exception {
        ServerConfig config = TestStores.config(dir, "tcp", Duration.ofSeconds(1));
        config.openStore(new StoreStats()).close();
        Files.setPosixFilePermissions(config.directory(), PosixFilePermissions.fromString("rwxrwxrwx"));
        assertThat(run("--dir", config.directory().toString(), "--listen", "tcp://127.0.0.1:0")).isEqualTo(2);
        assertThat(err.toString()).contains("erda-server: refusing " + config.directory() + " (mode rwxrwxrwx, owner "
                + System.getProperty("user.name"), "every user may write it");
        assertThat(run("verify", "--dir", config.directory().toString())).isEqualTo(2);
    }

    @Test
    void aStoreSharedWithAGroupIsVerifiedWithThatGroupOnly() throws Exception {
        String group = Files.readAttributes(Files.createFile(dir.resolve("probe")), PosixFileAttributes.class).group().getName();
        ServerConfig config = TestStores.config(dir, "tcp", Duration.ofSeconds(1)).withGroup(group);
        try (Store store = config.openStore(new StoreStats())) {
            TestStores.put(store, "k", "v");
        }
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(config.directory()))).isEqualTo("rwxrwx---");
        assertThat(run("verify", "--dir", config.directory().toString())).isEqualTo(2);
        assertThat(err.toString()).contains("may write it and the server was given no group (--group)");
        assertThat(run("verify", "--dir", config.directory().toString(), "--group", group)).isZero();
        assertThat(out.toString()).contains("1 entries", "clean");
    }

    @Test
    void anUnknownGroupIsRefusedNamingIt() {
        assertThat(run("--dir", dir.resolve("s").toString(), "--listen", "tcp://127.0.0.1:0", "--group",
                "erda-no-such-group")).isEqualTo(2);
        assertThat(err.toString()).contains("erda-server: group erda-no-such-group does not exist");
    }

    @Test
    void verifyOfADirectoryWithoutAStoreSaysSo() {
        assertThat(run("verify", "--dir", dir.resolve("nothing").toString())).isEqualTo(2);
        assertThat(err.toString()).contains("no store here");
    }

    /** The launcher's JVM options: ZGC (the resource says why), accepted by a JVM of this JDK. */
    @Test
    void theDefaultJvmOptionsSelectZgcInAJvmOfThisJdk() throws Exception {
        java.util.List<String> options = ErdaServerMain.defaultJvmOptions();
        assertThat(options).contains("-XX:+UseZGC").allSatisfy(o -> assertThat(o).startsWith("-").doesNotContain("#"));
        java.util.List<String> command = new java.util.ArrayList<>(java.util.List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        command.addAll(options);
        command.addAll(java.util.List.of("-XX:+PrintFlagsFinal", "-version"));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as(out).isZero();
        assertThat(out.lines().filter(l -> l.contains(" UseZGC ")).findFirst()).hasValueSatisfying(l -> assertThat(l).contains("true"));
    }
}
