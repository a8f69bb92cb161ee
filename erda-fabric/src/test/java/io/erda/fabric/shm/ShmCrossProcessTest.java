package io.erda.fabric.shm;

import static org.assertj.core.api.Assertions.assertThat;

import io.erda.fabric.Completion;
import io.erda.fabric.Endpoint;
import io.erda.fabric.EndpointOptions;
import io.erda.fabric.Fabric;
import io.erda.fabric.MemoryRegion;
import io.erda.fabric.RecvRequest;
import io.erda.fabric.Status;
import io.erda.fabric.SyncEndpoint;
import io.erda.fabric.WorkRequest;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * shm between two JVMs: the target is a real second process, killed mid-connection. Both pollers sleep until a
 * doorbell (no timed safety net), so the echo after an idle pause proves the doorbell works across processes, and
 * the flush after the kill proves a dead peer's EOF wakes a sleeping poller.
 */
class ShmCrossProcessTest {
    @TempDir
    Path tempDir;

    @Test
    void oneSidedAndTwoSidedWorkAcrossProcessesAndTargetDeathFlushesEverything() throws Exception {
        Path dir = tempDir.resolve("fabric");
        String javaBinary = ProcessHandle.current().info().command().orElseThrow();
        Process targetProcess = new ProcessBuilder(List.of(javaBinary, "--enable-native-access=ALL-UNNAMED", "-cp",
                System.getProperty("java.class.path"), EchoTarget.class.getName(), dir.toString(),
                tempDir.resolve("region.pm").toString()))
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try (Fabric fabric = Fabric.open(ShmFabric.uriOf(dir), EchoTarget.DOORBELLS_ONLY); Arena arena = Arena.ofShared()) {
            var out = new BufferedReader(new InputStreamReader(targetProcess.getInputStream(), StandardCharsets.UTF_8));
            String[] ready = out.readLine().split(" ");
            assertThat(ready[0]).isEqualTo("READY");
            long address = Long.parseLong(ready[1]);
            int rkey = Integer.parseInt(ready[2]);

            Endpoint endpoint = fabric.createEndpoint(EndpointOptions.defaults().withRnrTimeout(Duration.ofMinutes(1)));
            endpoint.connect(ShmFabric.uriOf(dir), new byte[] {1});
            assertThat(new String(endpoint.peerPrivateData(), StandardCharsets.UTF_8)).isEqualTo("echo");
            MemoryRegion local = fabric.registerLocal(arena.allocate(4096, 64));
            SyncEndpoint sync = new SyncEndpoint(endpoint, Duration.ofSeconds(10));

            local.segment().asSlice(0, 5).copyFrom(MemorySegment.ofArray("hello".getBytes(StandardCharsets.UTF_8)));
            sync.write(local, 0, 5, address + 100, rkey);
            sync.read(local, 200, 5, address + 100, rkey);
            assertThat(local.segment().asSlice(200, 5).toArray(ValueLayout.JAVA_BYTE)).asString(StandardCharsets.UTF_8).isEqualTo("hello");
            assertThat(sync.compareAndSwap(address + 8, rkey, 0, 42)).isZero();
            assertThat(sync.fetchAdd(address + 8, rkey, 1)).isEqualTo(42);

            sync.postRecv(local, 1024, 64);
            Thread.sleep(150); // both pollers fall asleep: only a doorbell across the processes wakes them
            sync.send(local, 0, 5);
            Completion echo = sync.receive();
            assertThat(local.segment().asSlice(1024, echo.byteLength()).toArray(ValueLayout.JAVA_BYTE))
                    .asString(StandardCharsets.UTF_8).isEqualTo("hello");

            local.segment().asSlice(0, 5).copyFrom(MemorySegment.ofArray("stall".getBytes(StandardCharsets.UTF_8)));
            sync.send(local, 0, 5);
            endpoint.postRecv(new RecvRequest(77, local, 2048, 64));
            endpoint.post(WorkRequest.send(78, local, 0, 5)); // no receive will ever be posted for it
            targetProcess.destroyForcibly().waitFor(10, TimeUnit.SECONDS);

            Completion pendingSend = endpoint.sendQueue().take(10, TimeUnit.SECONDS);
            assertThat(pendingSend).as("the outstanding SEND completes").isNotNull();
            assertThat(pendingSend.wrId()).isEqualTo(78);
            assertThat(pendingSend.status()).isNotEqualTo(Status.SUCCESS);
            Completion pendingRecv = endpoint.recvQueue().take(10, TimeUnit.SECONDS);
            assertThat(pendingRecv).as("the posted receive completes").isNotNull();
            assertThat(pendingRecv.status()).isEqualTo(Status.WR_FLUSH_ERROR);
            assertThat(endpoint.state()).isEqualTo(Endpoint.State.ERROR);
            endpoint.post(WorkRequest.read(79, local, 0, 8, address, rkey));
            assertThat(endpoint.sendQueue().take(10, TimeUnit.SECONDS).status()).isEqualTo(Status.WR_FLUSH_ERROR);
            sync.close();
            endpoint.close();
        } finally {
            targetProcess.destroyForcibly();
        }
    }
}
