package io.erda.fabric.verbs;

import io.erda.fabric.Fabric;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/** How many queue pairs this process holds, for the conformance suite's resource checks. */
final class QueuePairCount {
    private QueuePairCount() {
    }

    /** The software RNIC: what the fabrics have not destroyed yet. */
    static OptionalInt ofFabrics(Fabric... fabrics) {
        int n = 0;
        for (Fabric f : fabrics) {
            n += ((VerbsFabric) f).queuePairs();
        }
        return OptionalInt.of(n);
    }

    /**
     * A real device: the kernel's own count ({@code rdma resource show qp}, iproute2, which the SoftRoCE VM has) of
     * the device's RC queue pairs. Not filtered by process: the kernel names the thread that created a QP (often
     * one that has exited since), not the process; in the VM one test JVM at a time uses the device. A missing tool
     * or a failed listing fails the test instead of skipping it.
     */
    static OptionalInt ofKernel(String device) {
        Pattern rc = Pattern.compile("\\stype RC\\s");
        try {
            Process p = new ProcessBuilder("rdma", "resource", "show", "qp", "link", device).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new AssertionError("rdma resource show qp link " + device + " failed: " + out);
            }
            return OptionalInt.of((int) out.lines().filter(line -> rc.matcher(line).find()).count());
        } catch (IOException e) {
            throw new AssertionError("cannot run rdma (iproute2) to count the kernel's queue pairs: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while counting queue pairs", e);
        }
    }
}
