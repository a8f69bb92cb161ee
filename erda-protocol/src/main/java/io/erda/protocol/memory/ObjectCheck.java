package io.erda.protocol.memory;

/** Outcome of checking bytes that should hold an object; only {@link #VALID} may be trusted. */
public enum ObjectCheck {
    VALID,
    /** Fewer bytes available than a header, or than the lengths in the header claim. */
    TRUNCATED,
    /** Type byte is neither object nor tombstone (e.g. zero-filled or never written). */
    BAD_MARKER,
    /** Reserved bits set, or a length outside what the layout allows (garbage header). */
    BAD_LENGTH,
    /** Complete and intact, but a different key (e.g. a fingerprint collision). */
    KEY_MISMATCH,
    /** Lengths plausible but the checksum does not match: torn or corrupt. */
    BAD_CRC;

    public boolean isValid() {
        return this == VALID;
    }
}
