package io.erda.protocol;

import java.util.ArrayList;
import java.util.List;

/**
 * One of the twelve server configurations of Kashyap et al., <i>Correct, Fast Remote Persistence</i> (Table 1;
 * docs/persistence.md): persistence domain × DDIO on or off × receive-queue work request buffers (RQWRB) in DRAM or
 * in PM. What survives a power failure follows from it: {@link #keepsOneSidedOnceReceived}, {@link
 * #keepsOneSidedOncePlaced}, {@link #keepsOneSidedOnceFenced}; a SEND into a PM receive buffer is placed like a
 * WRITE and survives as one. The store's power-failure emulation (erda-server
 * {@code PmEmulation}) and REMOTELOG's {@code ResponderMemory} both read these, and {@link
 * PersistenceMethod#correctIn} says which of the store's methods is enough in each.
 *
 * @param domain            what survives a power failure
 * @param ddio              incoming RDMA data is placed in the processor's last-level cache (Intel DDIO, ARM cache
 *                          stashing) rather than sent to the memory controller
 * @param pmReceiveBuffers  the responder's posted receive buffers lie in PM, so a SEND's payload is in PM once placed
 */
public record PmConfiguration(PersistenceDomain domain, boolean ddio, boolean pmReceiveBuffers) {

    public PmConfiguration {
        java.util.Objects.requireNonNull(domain, "domain");
    }

    /** The twelve, in Table 1's order: DMP, MHP, WSP; within each DDIO on before off; DRAM before PM buffers. */
    public static List<PmConfiguration> all() {
        List<PmConfiguration> all = new ArrayList<>(12);
        for (PersistenceDomain d : PersistenceDomain.values()) {
            for (boolean ddio : new boolean[] {true, false}) {
                for (boolean pm : new boolean[] {false, true}) {
                    all.add(new PmConfiguration(d, ddio, pm));
                }
            }
        }
        return List.copyOf(all);
    }

    /**
     * The configuration a persistence method is made for (docs/persistence.md, "Which method to configure"), with
     * DRAM receive buffers: {@code wsp} WSP, {@code read-after-write} DMP with DDIO off, {@code server-flush} DMP with
     * DDIO on. What the store emulates when no configuration is given.
     */
    public static PmConfiguration madeFor(PersistenceMethod method) {
        return switch (method) {
            case WSP -> new PmConfiguration(PersistenceDomain.WSP, true, false);
            case READ_AFTER_WRITE -> new PmConfiguration(PersistenceDomain.DMP, false, false);
            case SERVER_FLUSH -> new PmConfiguration(PersistenceDomain.DMP, true, false);
        };
    }

    /**
     * A one-sided WRITE is durable once the RNIC received it, that is once its completion is reported (InfiniBand,
     * RoCE): WSP.
     */
    public boolean keepsOneSidedOnceReceived() {
        return domain.keepsReceived();
    }

    /**
     * A one-sided WRITE is durable once a later FLUSH (or the READ that stands in for one) on the same connection
     * completed: everywhere except DMP with DDIO on, where the Flush leaves the data in the processor cache (§3.1.2).
     * Where it is not, only the server's own cache-line write-back makes it durable.
     */
    public boolean keepsOneSidedOnceFenced() {
        return domain.keepsPlaced() || !ddio;
    }

    /**
     * A placed one-sided WRITE is durable (MHP, WSP): then a later SEND of the connection, whose delivery follows
     * the WRITE's placement, shows it durable too.
     */
    public boolean keepsOneSidedOncePlaced() {
        return domain.keepsPlaced();
    }

    /** The paper's name, in ASCII ({@code !DDIO} for its ¬DDIO): {@code DMP+DDIO+DRAM-RQWRB}. */
    public String label() {
        return domain + "+" + (ddio ? "DDIO" : "!DDIO") + "+" + (pmReceiveBuffers ? "PM" : "DRAM") + "-RQWRB";
    }

    /** Parses {@link #label()}; also accepts {@code ¬DDIO} and {@code noDDIO}, case-insensitively. */
    public static PmConfiguration parse(String label) {
        String normalized = label.trim().toUpperCase(java.util.Locale.ROOT).replace("¬", "!").replace("NODDIO", "!DDIO");
        for (PmConfiguration c : all()) {
            if (c.label().equals(normalized)) {
                return c;
            }
        }
        throw new IllegalArgumentException("configuration '" + label + "' is none of the twelve: expected e.g. "
                + all().getFirst().label() + " or " + all().getLast().label());
    }

    /** The configuration's code on the wire: 1 + its index in {@link #all()} (0 means none reported). */
    public int code() {
        return 1 + all().indexOf(this);
    }

    /** The configuration of {@link #code()}, or null for 0. */
    public static PmConfiguration ofCode(int code) {
        if (code == 0) {
            return null;
        }
        if (code < 0 || code > 12) {
            throw new WireFormatException("PM configuration code " + code + " is unknown: expected 0 to 12");
        }
        return all().get(code - 1);
    }

    @Override
    public String toString() {
        return label();
    }
}
