package io.erda.protocol;

/**
 * How a server's Erda connections publish an update of an existing key (docs/one-sided-put.md), advertised in
 * {@link StoreInfo}.
 * <ul>
 *   <li>{@link #RESERVE}: the paper's PUT. The server reserves the object's room and flips the key's word to it at
 *       once; the client WRITEs the object, and a torn one falls back to the previous version.</li>
 *   <li>{@link #ONE_SIDED}: the server grants a client a leased log block ({@link MessageType#BLOCK}); the client
 *       WRITEs the object into it, makes it durable, and publishes it with one remote CAS on the key's word. A word
 *       of an existing key then only ever names complete objects. Inserts of absent keys stay with the server
 *       ({@link MessageType#PUT}); a PUT of an existing key is refused with {@link WireStatus#PUBLISH_BY_CAS}.</li>
 * </ul>
 */
public enum PutMode {
    RESERVE("reserve"),
    ONE_SIDED("one-sided");

    private final String option;

    PutMode(String option) {
        this.option = option;
    }

    /** The name of {@code --put}. */
    public String option() {
        return option;
    }

    public static PutMode fromOption(String name) {
        for (PutMode m : values()) {
            if (m.option.equals(name)) {
                return m;
            }
        }
        throw new IllegalArgumentException("--put " + name + " is not reserve or one-sided");
    }

    static PutMode ofCode(int code) {
        if (code < 0 || code >= values().length) {
            throw new WireFormatException("put mode " + code + " is not 0 (reserve) or 1 (one-sided)");
        }
        return values()[code];
    }
}
