package io.erda.core.pm;

/** A PM file whose header does not match what the opener expects (found vs expected). */
public final class PmFormatException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public PmFormatException(String message) {
        super(message);
    }

    /** Throws "{file}: {what} {found}, expected {expected}" unless the two agree. */
    public static void requireEqual(Object file, String what, long found, long expected) {
        if (found != expected) {
            throw new PmFormatException(file + ": " + what + " " + found + ", expected " + expected);
        }
    }
}
