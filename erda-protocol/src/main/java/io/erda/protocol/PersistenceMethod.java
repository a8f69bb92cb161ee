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
