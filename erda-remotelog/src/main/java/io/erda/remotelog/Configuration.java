package io.erda.remotelog;

import java.util.ArrayList;
import java.util.List;

/**
 * One of the paper's twelve responder configurations (Table 1): persistence domain × DDIO on or off × receive-queue
 * work request buffers (RQWRB) in DRAM or in PM.
 *
 * @param domain            what survives a power failure
 * @param ddio              incoming RDMA data is placed in the processor's last-level cache (Intel DDIO, ARM cache
 *                          stashing) rather than sent to the memory controller
 * @param pmReceiveBuffers  the responder's posted receive buffers lie in PM, so a SEND's payload is in PM once placed
 */
public record Configuration(Domain domain, boolean ddio, boolean pmReceiveBuffers) {

    /** The twelve, in Table 1's order: DMP, MHP, WSP; within each DDIO on before off; DRAM before PM buffers. */
    public static List<Configuration> all() {
        List<Configuration> all = new ArrayList<>(12);
        for (Domain d : Domain.values()) {
            for (boolean ddio : new boolean[] {true, false}) {
                for (boolean pm : new boolean[] {false, true}) {
                    all.add(new Configuration(d, ddio, pm));
                }
            }
        }
        return List.copyOf(all);
    }

    /** The paper's name, in ASCII ({@code !DDIO} for its ¬DDIO): {@code DMP+DDIO+DRAM-RQWRB}. */
    public String label() {
        return domain + "+" + (ddio ? "DDIO" : "!DDIO") + "+" + (pmReceiveBuffers ? "PM" : "DRAM") + "-RQWRB";
    }

    /** Parses {@link #label()}; also accepts {@code ¬DDIO} and {@code noDDIO}, case-insensitively. */
    public static Configuration parse(String label) {
        for (Configuration c : all()) {
            String normalized = label.trim().toUpperCase().replace("¬", "!").replace("NODDIO", "!DDIO");
            if (c.label().equalsIgnoreCase(normalized)) {
                return c;
            }
        }
        throw new IllegalArgumentException("configuration '" + label + "' is none of the twelve: expected e.g. "
                + all().getFirst().label() + " or " + all().getLast().label());
    }

    @Override
    public String toString() {
        return label();
    }
}
