package io.erda.server.platform;

import io.erda.core.pm.PmRegion;
import io.erda.core.pm.PowerFailure;
import io.erda.fabric.Backing;
import io.erda.fabric.DurableMirror;
import io.erda.fabric.RegisterOptions;
import io.erda.protocol.PersistenceMethod;
import java.nio.file.Path;

/**
 * How the server's PM is emulated beyond DRAM standing in for it (docs/ARCHITECTURE.md, [persistence], [recovery]).
 *
 * <p>{@link #POWER_FAILURE}: every PM file keeps a durable image of what the persistence method made durable
 * (erda-core's {@link PowerFailure}), so that after the server process is killed {@code erda-server power-fail}
 * can collapse the store to what a power failure could leave. What is durable when, per method:
 * <ul>
 *   <li>{@code wsp}: everything that reached memory survives (eADR), so nothing is kept apart and nothing is lost:
 *       the directory keeps no images;</li>
 *   <li>{@code read-after-write} (DDIO off, ADR): one-sided writes into log regions are durable on placement (the
 *       registration mirrors them into the image); the server's own stores once persisted;</li>
 *   <li>{@code server-flush} (DDIO on, ADR): one-sided writes into log regions sit in caches until the server
 *       persists them (a FLUSH request, or its own persists);</li>
 *   <li>every method: the Read After Write baseline's ring is durable on placement (its client always forces with
 *       a READ), and Redo Logging's entries are the server's stores, persisted before it replies.</li>
 * </ul>
 */
public enum PmEmulation {
    /** Persist is all there is: nothing is kept apart. */
    NONE("none"),
    /** Durable images beside the PM files, for the offline power-failure collapse. */
    POWER_FAILURE("power-failure");

    private final String option;

    PmEmulation(String option) {
        this.option = option;
    }

    /** The name on command lines. */
    public String option() {
        return option;
    }

    public static PmEmulation fromOption(String name) {
        for (PmEmulation e : values()) {
            if (e.option.equalsIgnoreCase(name)) {
                return e;
            }
        }
        throw new IllegalArgumentException("PM emulation '" + name + "' is not one of none, power-failure");
    }

    /**
     * Sets the store directory up before its files are opened: under power-failure emulation with a method that
     * can lose anything, the marker that makes PM files keep durable images; under wsp no images (a store switched
     * to it loses its marker and images). A directory with the marker is refused without the emulation, so a
     * campaign that forgets the option does not run unemulated unnoticed.
     */
    public void prepare(Path directory, PersistenceMethod method) {
        if (this == POWER_FAILURE && method != PersistenceMethod.WSP) {
            PowerFailure.enable(directory, "power-failure emulation, persistence method " + method.option()
                    + ": every PM file keeps NAME" + PowerFailure.IMAGE_SUFFIX + " (docs/ARCHITECTURE.md, [persistence])");
        } else if (this == POWER_FAILURE) {
            PowerFailure.disable(directory);
        } else if (PowerFailure.enabled(directory)) {
            throw new IllegalArgumentException("store directory " + directory + " is set up for power-failure emulation"
                    + " (it holds " + PowerFailure.MARKER + "): start with --pm-emulation power-failure, or delete that"
                    + " file and the *" + PowerFailure.IMAGE_SUFFIX + " images to leave the emulation");
        }
    }

    /**
     * {@code options} with the region's durable image as the durable mirror, for a registration whose one-sided
     * writes are durable on placement; unchanged when the region keeps no image.
     */
    public static RegisterOptions durableOnPlacement(RegisterOptions options, PmRegion region) {
        if (region.durableImage() == null) {
            return options;
        }
        return options.withDurableMirror(new DurableMirror(region.durableImage(),
                new Backing(region.durableImagePath(), region.dataFileOffset()), region.durableImageLock(),
                region.durableImageLockOffset()));
    }
}
