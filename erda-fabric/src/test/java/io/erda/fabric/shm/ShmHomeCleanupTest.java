package io.erda.fabric.shm;

import static org.assertj.core.api.Assertions.assertThat;

import io.erda.fabric.ConnectionRequest;
import io.erda.fabric.Endpoint;
import io.erda.fabric.Fabric;
import io.erda.fabric.Listener;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What an shm process leaves behind, with real child processes ({@link ShmHomeOwner}): nothing after a clean exit,
 * whether it closed its fabrics or exited with them open; after kill -9 its homes stay only until the next process
 * opens an shm fabric (the one under {@code /dev/shm}) or makes its home beside them (the one under a connect
 * directory). A live process's homes are never collected.
 */
class ShmHomeCleanupTest {
    @TempDir
    Path work;

    private record Child(Process process, Path homeA, Path homeB) {
    }

    /** Starts the child and accepts its connection on work/b with {@code target}; returns once it printed its homes. */
    private Child start(String mode, Fabric target, Listener listener) throws Exception {
        String java = ProcessHandle.current().info().command().orElseThrow();
        Process p = new ProcessBuilder(List.of(java, "--enable-native-access=ALL-UNNAMED", "-cp",
                System.getProperty("java.class.path"), ShmHomeOwner.class.getName(), mode, work.toString()))
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        ConnectionRequest request = listener.accept(60, TimeUnit.SECONDS);
        assertThat(request).as("the child connects").isNotNull();
        Endpoint endpoint = target.createEndpoint();
        request.accept(endpoint, new byte[0]);
        var out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String[] homes = out.readLine().split(" ");
        assertThat(homes[0]).isEqualTo("HOMES");
        Child child = new Child(p, Path.of(homes[1]), Path.of(homes[2]));
        assertThat(child.homeA().getFileName().toString()).isEqualTo("erda-shm-" + p.pid() + "-1");
        assertThat(child.homeA()).isDirectory().hasParent(Path.of("/dev/shm"));
        assertThat(child.homeB()).isEqualTo(work.resolve("b").resolve(p.pid() + "-2")).isDirectory();
        assertThat(child.homeA().resolve(ShmHome.LOCK_FILE)).isRegularFile();
        return child;
    }

    private void cleanExitLeavesNothing(String mode) throws Exception {
        try (Fabric target = Fabric.open(ShmFabric.uriOf(work.resolve("b")));
             Listener listener = target.listen(ShmFabric.uriOf(work.resolve("b")))) {
            Child child = start(mode, target, listener);
            try {
                assertThat(child.process().waitFor(60, TimeUnit.SECONDS)).as("the child exits").isTrue();
                assertThat(child.process().exitValue()).isZero();
                assertThat(child.homeA()).doesNotExist();
                assertThat(child.homeB()).doesNotExist();
                assertThat(work.resolve("a").resolve(ShmFabric.SOCKET_FILE)).doesNotExist();
            } finally {
                child.process().destroyForcibly();
            }
        }
    }

    @Test
    void closingTheFabricsLeavesNothing() throws Exception {
        cleanExitLeavesNothing("close");
    }

    @Test
    void exitingWithTheFabricsOpenLeavesNothing() throws Exception {
        cleanExitLeavesNothing("exit");
    }

    @Test
    void aKilledProcessesHomesAreCollectedByTheNextOneAndALiveOnesNever() throws Exception {
        try (Fabric target = Fabric.open(ShmFabric.uriOf(work.resolve("b")));
             Listener listener = target.listen(ShmFabric.uriOf(work.resolve("b")))) {
            Child child = start("hang", target, listener);
            try {
                try (ShmFabric other = (ShmFabric) Fabric.open(ShmFabric.uriOf(work.resolve("b")))) {
                    other.home(work.resolve("b")); // collects beside itself as well: the child is alive
                    assertThat(child.homeA()).as("a live process's home under /dev/shm").isDirectory();
                    assertThat(child.homeB()).as("a live process's home beside another").isDirectory();
                }
                child.process().destroyForcibly(); // SIGKILL: no shutdown hook runs
                assertThat(child.process().waitFor(30, TimeUnit.SECONDS)).isTrue();
                assertThat(child.homeA()).as("kill -9 leaves the home").isDirectory();
                assertThat(child.homeB()).isDirectory();

                try (ShmFabric next = (ShmFabric) Fabric.open(ShmFabric.uriOf(work.resolve("b")))) {
                    assertThat(child.homeA()).as("collected when the next process opens an shm fabric").doesNotExist();
                    assertThat(child.homeB()).as("not before a home is made beside it").isDirectory();
                    Path own = next.home(work.resolve("b"));
                    assertThat(child.homeB()).as("collected when the next home is made beside it").doesNotExist();
                    assertThat(own).isDirectory();
                }
            } finally {
                child.process().destroyForcibly();
            }
        }
    }

    @Test
    void aHomeWithoutLockFileIsCollectedOnlyOnceItsPidIsDead() throws Exception {
        // the owner died between creating the directory and its lock file
        Process dead = new ProcessBuilder("true").start();
        dead.waitFor();
        Path orphan = work.resolve(dead.pid() + "-1");
        Files.createDirectories(orphan);
        Path living = work.resolve(ProcessHandle.current().parent().orElseThrow().pid() + "-1");
        Files.createDirectories(living);
        assertThat(ShmHome.collectStale(work)).isEqualTo(1);
        assertThat(orphan).doesNotExist();
        assertThat(living).as("its pid lives and is older than the directory").isDirectory();
    }
}
