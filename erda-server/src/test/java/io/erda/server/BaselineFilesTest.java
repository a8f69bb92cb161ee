package io.erda.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.core.pm.PmFileHeader;
import io.erda.core.pm.PmFormatException;
import io.erda.core.pm.PmRegion;
import io.erda.core.pm.WriteLatencyModel;
import io.erda.core.testing.ShmTempDirFactory;
import io.erda.server.baseline.ReadAfterWriteRing;
import io.erda.server.baseline.RedoLog;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The baselines' PM files carry kinds of their own, so that a file put in the wrong place is refused. */
class BaselineFilesTest {
    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private ServerConfig config() {
        return TestStores.config(dir, "tcp", Duration.ofSeconds(30));
    }

    private Path storeFile(String name) {
        return config().directory().resolve(name);
    }

    @Test
    void everyPmFileKindIsDistinct() {
        assertThat(java.util.List.of(PmFileHeader.KIND_TABLE, PmFileHeader.KIND_LOG_REGION,
                PmFileHeader.KIND_HEAD_RECORDS, ReadAfterWriteRing.KIND, RedoLog.KIND)).doesNotHaveDuplicates();
    }

    @Test
    void aRedoLogOfTheKindItHadBeforeItsOwnStillOpens() throws Exception {
        RequestServer.start(config()).close(); // creates the store and its baseline files
        Path redo = storeFile(RedoLog.FILE);
        Files.delete(redo);
        replaceWith(redo, RedoLog.LEGACY_KIND);
        RequestServer.start(config()).close();
    }

    @Test
    void aRedoLogOfAnotherKindIsRefusedNamingTheKinds() throws Exception {
        RequestServer.start(config()).close();
        Path redo = storeFile(RedoLog.FILE);
        Files.delete(redo);
        replaceWith(redo, ReadAfterWriteRing.KIND);
        assertThatThrownBy(() -> RequestServer.start(config()).close())
                .isInstanceOf(PmFormatException.class)
                .hasMessageContaining("file kind " + ReadAfterWriteRing.KIND + ", expected " + RedoLog.KIND);
    }

    private static void replaceWith(Path redo, int kind) {
        long length = (long) RedoLog.LANES * RedoLog.BUFFERS_PER_LANE * RedoLog.BUFFER_SIZE;
        PmRegion.create(redo, kind, length, new long[] {RedoLog.LANES, RedoLog.BUFFERS_PER_LANE, RedoLog.BUFFER_SIZE},
                WriteLatencyModel.OFF).close();
    }
}
