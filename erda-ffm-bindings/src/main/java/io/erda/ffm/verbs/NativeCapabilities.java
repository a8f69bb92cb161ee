package io.erda.ffm.verbs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Which extended send operations (ibv_qp_ex, {@code ibv_wr_*}) may be used natively. Both are
 * static inlines calling function pointers of {@code struct ibv_qp_ex}; a slot may be read only if
 * the running libibverbs knows it (reading past the struct of an older library reads garbage):
 * {@code wr_atomic_write} came with rdma-core v44, {@code wr_flush} with v45. FLUSH also needs the
 * bindings to have been generated against v45+ headers ({@code Verbs.ERDA_HAVE_WR_FLUSH}).
 *
 * <p>This is the library's capability; a device still has to accept the matching
 * {@code IBV_QP_EX_WITH_*} send-ops flags when the QP is created (EOPNOTSUPP otherwise).
 * Without native FLUSH the fabric emulates it with a READ (docs/ARCHITECTURE.md, [persistence];
 * docs/verbs.md).
 *
 * @param rdmaCoreVersion the rdma-core release of the loaded library, 0 if unknown
 */
public record NativeCapabilities(int rdmaCoreVersion, boolean nativeAtomicWrite, boolean nativeFlush) {
    public static final int ATOMIC_WRITE_SINCE = 44;
    public static final int FLUSH_SINCE = 45;

    public static NativeCapabilities forVersion(int rdmaCoreVersion) {
        return new NativeCapabilities(rdmaCoreVersion, rdmaCoreVersion >= ATOMIC_WRITE_SINCE,
                rdmaCoreVersion >= FLUSH_SINCE && Verbs.ERDA_HAVE_WR_FLUSH == 1);
    }

    // libibverbs.so.1.14.44.0: the third component is the rdma-core release.
    private static final Pattern SONAME_VERSION = Pattern.compile("\\.so\\.1\\.\\d+\\.(\\d+)\\.\\d+$");

    /**
     * The rdma-core release of a loaded library, read from the file name mapped into this process
     * (e.g. {@code /usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0}); 0 if not found.
     */
    public static int loadedRdmaCoreVersion(String sonamePrefix) {
        try (Stream<String> maps = Files.lines(Path.of("/proc/self/maps"))) {
            return maps.filter(line -> line.contains(sonamePrefix))
                    .map(line -> SONAME_VERSION.matcher(line.trim()))
                    .filter(Matcher::find)
                    .mapToInt(m -> Integer.parseInt(m.group(1)))
                    .findFirst().orElse(0);
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }
}
