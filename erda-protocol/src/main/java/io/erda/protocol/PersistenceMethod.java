package io.erda.protocol;

/**
 * How a client makes its one-sided WRITE persistent before it reports a PUT durable (docs/ARCHITECTURE.md,
 * [persistence]; Kashyap et al., "Correct, Fast Remote Persistence"). The server advertises one at connect time.
 */
public enum PersistenceMethod {
    /** Whole-system persistence: a completed WRITE is already persistent. Nothing more. */
    WSP("wsp"),
    /** A READ (or native FLUSH) on the same connection after the WRITE: DDIO off / non-allocating writes, or eADR. */
    READ_AFTER_WRITE("read-after-write"),
    /** A SEND naming the range; the server flushes it from its caches and replies: DDIO on with ADR. */
    SERVER_FLUSH("server-flush");

    private final String option;

    PersistenceMethod(String option) {
        this.option = option;
    }

    /** The name used on command lines and in reports. */
    public String option() {
        return option;
    }

    /**
     * Whether an acknowledged PUT made durable this way survives a power failure in {@code configuration}: the
     * taxonomy's verdict for the method's row ({@code wsp} is Write, {@code read-after-write} Write;Flush, {@code
     * server-flush} Write;Send;responder flush: erda-remotelog's {@code TaxonomyTest} checks they agree).
     */
    public boolean correctIn(PmConfiguration configuration) {
        return switch (this) {
            case WSP -> configuration.keepsOneSidedOnceReceived();
            case READ_AFTER_WRITE -> configuration.keepsOneSidedOnceFenced();
            case SERVER_FLUSH -> true;
        };
    }

    /** Why the method is (or is not) enough in {@code configuration}, starting with "correct" or "incorrect". */
    public String reasonIn(PmConfiguration configuration) {
        String verdict = correctIn(configuration) ? "correct" : "incorrect";
        return verdict + ": " + switch (this) {
            case WSP -> configuration.keepsOneSidedOnceReceived()
                    ? "in WSP what the NIC received is durable, and the WRITE's completion says it was received"
                    : "outside WSP a WRITE's completion means only that the NIC received it";
            case READ_AFTER_WRITE -> configuration.keepsOneSidedOnceFenced()
                    ? "the FLUSH (or READ) completes once the WRITE is in the persistence domain"
                    : "with DDIO in DMP the FLUSH (or READ) leaves the WRITE in the processor cache";
            case SERVER_FLUSH -> "the server writes the range back from its caches before it replies";
        };
    }

    public static PersistenceMethod fromOption(String name) {
        for (PersistenceMethod m : values()) {
            if (m.option.equalsIgnoreCase(name)) {
                return m;
            }
        }
        throw new IllegalArgumentException("persistence method '" + name + "' is not one of wsp, read-after-write, server-flush");
    }

    public static PersistenceMethod ofCode(int code) {
        if (code < 0 || code >= values().length) {
            throw new WireFormatException("persistence method code " + code + " is unknown");
        }
        return values()[code];
    }
}
