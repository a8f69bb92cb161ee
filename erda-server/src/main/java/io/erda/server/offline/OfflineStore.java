package io.erda.server.offline;

import io.erda.core.PmDirectory;
import io.erda.core.pm.PmFileModes;
import io.erda.core.pm.PmFormatException;
import io.erda.core.pm.WriteLatencyModel;
import java.nio.file.Path;

/** Opens a stopped store for the offline commands, with the geometry its files record. */
final class OfflineStore {
    private OfflineStore() {
    }

    static PmDirectory open(Path directory, String group) {
        if (!PmDirectory.exists(directory)) {
            throw new PmFormatException(directory + ": no store here (no " + PmDirectory.TABLE_FILE + ")");
        }
        PmFileModes.checkDirectory(directory, group); // before storedGeometry reads a file
        return PmDirectory.open(directory, PmDirectory.storedGeometry(directory), WriteLatencyModel.OFF, group);
    }
}
