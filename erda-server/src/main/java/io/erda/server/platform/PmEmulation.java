package io.erda.server.platform;

import io.erda.core.pm.PmRegion;
import io.erda.core.pm.PowerFailure;
import io.erda.fabric.Backing;
import io.erda.fabric.DurableMirror;
import io.erda.fabric.RegisterOptions;
import io.erda.protocol.PersistenceMethod;
import io.erda.protocol.PmConfiguration;
import java.nio.file.Path;
import java.util.Objects;

/**
 * How the server's PM is emulated beyond DRAM standing in for it (docs/ARCHITECTURE.md, [persistence], [recovery];
 * docs/persistence.md, "The store's emulation"), and the server configuration of the remote-persistence taxonomy it
 * emulates ({@link PmConfiguration}: persistence domain, DDIO, receive buffers; default: the one the persistence
 * method is made for, {@link PmConfiguration#madeFor}).
 *
 * <p>{@link Mode#POWER_FAILURE}: every PM file keeps a durable image of what the configuration makes durable
 * (erda-core's {@link PowerFailure}), so that after the server process is killed {@code erda-server power-fail} can
 * collapse the store to what a power failure could leave. What is durable when, per configuration:
 * <ul>
 *   <li>WSP: everything that reached the server (the RNIC's buffers are in the domain), so nothing is kept apart and
 *       nothing is lost: the directory keeps no images;</li>
 *   <li>MHP: a client's one-sided write into a log region once a later request of its connection shows it placed
 *       (a READ, FLUSH, atomic or message: {@link DurableMirror.Durability#ONCE_SHOWN_PLACED}); before that it may
 *       still be in the RNIC's buffers;</li>
 *   <li>DMP with DDIO off: such a write once a later READ or FLUSH of its connection completes ({@link
 *       DurableMirror.Durability#ONCE_FENCED}): placed, it may still be in the I/O controller;</li>
 *   <li>DMP with DDIO on: such a write only once the server writes it back from its cache (a FLUSH request, or its
 *       own persists);</li>
 *   <li>everywhere: the server's own stores once it persists them (which under MHP and WSP is later than the
 *       hardware makes them durable: the server never relies on an unpersisted store); the Read After Write
 *       baseline's ring on placement (its client always forces with a READ), Redo Logging's entries as the server's
 *       stores, persisted before it replies.</li>
 * </ul>
 * Receive buffers in PM would keep a SEND's payload; the store's recovery never replays its receive buffers, and no
 * method acknowledges a PUT on a SEND alone, so that axis changes nothing the store loses (REMOTELOG's SEND methods
 * exercise it). Each PUT's data is a one-sided WRITE, so the store's methods are the taxonomy's WRITE rows: {@link
 * PersistenceMethod#correctIn}.
 *
 * @param mode          none, or power-failure
 * @param configuration the emulated configuration, or null: the one the persistence method is made for
 */
public record PmEmulation(Mode mode, PmConfiguration configuration) {
    /** No durable images: persist is all there is. */
    public static final PmEmulation NONE = new PmEmulation(Mode.NONE, null);
    /** Durable images beside the PM files, for the offline power-failure collapse, in the method's configuration. */
    public static final PmEmulation POWER_FAILURE = new PmEmulation(Mode.POWER_FAILURE, null);

    /** Whether PM files keep durable images. */
    public enum Mode {
        /** Persist is all there is: nothing is kept apart. */
        NONE("none"),
        /** Durable images beside the PM files, for the offline power-failure collapse. */
        POWER_FAILURE("power-failure");

        private final String option;

        Mode(String option) {
            this.option = option;
        }
    }

    public PmEmulation {
        Objects.requireNonNull(mode, "mode");
    }

    /** The name of the mode on command lines. */
    public String option() {
        return mode.option;
    }

    public static PmEmulation fromOption(String name) {
        for (Mode m : Mode.values()) {
            if (m.option.equalsIgnoreCase(name)) {
                return new PmEmulation(m, null);
            }
        }
        throw new IllegalArgumentException("PM emulation '" + name + "' is not one of none, power-failure");
    }

    /** This emulation, of {@code emulated} (null: the persistence method's own configuration). */
    public PmEmulation withConfiguration(PmConfiguration emulated) {
        return new PmEmulation(mode, emulated);
    }

    public boolean powerFailure() {
        return mode == Mode.POWER_FAILURE;
    }

    /** The configuration in effect for a server whose clients use {@code method}. */
    public PmConfiguration configuration(PersistenceMethod method) {
        return configuration != null ? configuration : PmConfiguration.madeFor(method);
    }

    /**
     * Sets the store directory up before its files are opened: under power-failure emulation of a configuration
     * that can lose anything, the marker that makes PM files keep durable images; under WSP no images (a store
     * switched to it loses its marker and images). A directory with the marker is refused without the emulation, so
     * a campaign that forgets the option does not run unemulated unnoticed.
     */
    public void prepare(Path directory, PersistenceMethod method) {
        PmConfiguration emulated = configuration(method);
        if (powerFailure() && !emulated.keepsOneSidedOnceReceived()) {
            PowerFailure.enable(directory, "power-failure emulation of " + emulated.label() + ", persistence method "
                    + method.option() + " (" + method.reasonIn(emulated) + "): every PM file keeps NAME"
                    + PowerFailure.IMAGE_SUFFIX + " (docs/persistence.md, \"The store's emulation\")");
        } else if (powerFailure()) {
            PowerFailure.disable(directory);
        } else if (PowerFailure.enabled(directory)) {
            throw new IllegalArgumentException("store directory " + directory + " is set up for power-failure emulation"
                    + " (it holds " + PowerFailure.MARKER + "): start with --pm-emulation power-failure, or delete that"
                    + " file and the *" + PowerFailure.IMAGE_SUFFIX + " images to leave the emulation");
        }
    }

    /**
     * When a client's one-sided write into a log region is durable in {@code emulated} by the fabric alone, or null
     * when only the server's write-back makes it durable (DMP with DDIO on: a FLUSH or READ stops in the cache).
     */
    public static DurableMirror.Durability logWrites(PmConfiguration emulated) {
        if (emulated.keepsOneSidedOnceReceived()) {
            return DurableMirror.Durability.ON_PLACEMENT; // a provider places what it received at once
        }
        if (emulated.keepsOneSidedOncePlaced()) {
            return DurableMirror.Durability.ONCE_SHOWN_PLACED;
        }
        return emulated.keepsOneSidedOnceFenced() ? DurableMirror.Durability.ONCE_FENCED : null;
    }

    /**
     * {@code options} for a log region in {@code emulated}: with the region's durable image as the durable mirror,
     * taking writes when {@link #logWrites} says; unchanged when the region keeps no image or the configuration
     * leaves one-sided writes to the server's write-back.
     */
    public static RegisterOptions logRegion(RegisterOptions options, PmRegion region, PmConfiguration emulated) {
        DurableMirror.Durability when = logWrites(emulated);
        return when == null ? options : mirrored(options, region, when);
    }

    /**
     * {@code options} with the region's durable image as the durable mirror, for a registration whose one-sided
     * writes are durable on placement; unchanged when the region keeps no image.
     */
    public static RegisterOptions durableOnPlacement(RegisterOptions options, PmRegion region) {
        return mirrored(options, region, DurableMirror.Durability.ON_PLACEMENT);
    }

    private static RegisterOptions mirrored(RegisterOptions options, PmRegion region, DurableMirror.Durability when) {
        if (region.durableImage() == null) {
            return options;
        }
        return options.withDurableMirror(new DurableMirror(region.durableImage(),
                new Backing(region.durableImagePath(), region.dataFileOffset()), region.durableImageLock(),
                region.durableImageLockOffset(), when));
    }
}
