package io.erda.remotelog;

import java.util.Arrays;
import java.util.List;

/**
 * A way to make one REMOTELOG append durable: the rows of the paper's Table 2 (singleton update: the checksummed record
 * alone, the tail found by its checksum) and Table 3 (compound update: the record a, then the 8-byte tail pointer b,
 * persisted in that order), as a sequence of requester operations plus what the responder's CPU does. {@code Rq} is
 * the requester, {@code Rsp} the responder; {@code flush} is a local cache-line write-back at the responder, {@code
 * copy} a local store, {@code Flush} the RDMA FLUSH, {@code Comp} waiting for a completion.
 *
 * <p>{@link Appender} executes each over the fabric SPI and {@link LogServer} plays the responder's part; {@link
 * Taxonomy} says in which configurations each is correct.
 */
public enum Method {
    // ---- Table 2: singleton updates ----
    WRITE_SEND_FLUSH(Update.SINGLETON, Primary.WRITE,
            "Rq Write(a); Rq Send(&a); Rsp flush(&a); Rsp Send(ack)", "Erda server-flush; Intel GPSPM (GPRRM)"),
    WRITEIMM_SERVER_FLUSH(Update.SINGLETON, Primary.WRITE_IMM,
            "Rq WriteImm(a); Rsp flush(&a); Rsp Send(ack)", ""),
    SEND_COPY_FLUSH(Update.SINGLETON, Primary.SEND,
            "Rq Send(a); Rsp copy(a) + flush(&a); Rsp Send(ack)", "message passing, universal"),
    WRITE_FLUSH(Update.SINGLETON, Primary.WRITE,
            "Rq Write(a); Rq Flush; Rq Comp(Flush)", "Erda read-after-write; Intel APM (ARRM)"),
    WRITEIMM_FLUSH(Update.SINGLETON, Primary.WRITE_IMM,
            "Rq WriteImm(a); Rq Flush; Rq Comp(Flush)", ""),
    SEND_COPY(Update.SINGLETON, Primary.SEND,
            "Rq Send(a); Rsp copy(a); Rsp Send(ack)", ""),
    SEND_FLUSH(Update.SINGLETON, Primary.SEND,
            "Rq Send(a); Rq Flush; Rq Comp(Flush); recovery applies the PM receive buffer", ""),
    SEND(Update.SINGLETON, Primary.SEND,
            "Rq Send(a); Rq Comp(Send); recovery applies the PM receive buffer", ""),
    WRITE(Update.SINGLETON, Primary.WRITE,
            "Rq Write(a); Rq Comp(Write)", "Erda wsp"),
    WRITEIMM(Update.SINGLETON, Primary.WRITE_IMM,
            "Rq WriteImm(a); Rq Comp(WriteImm)", ""),

    // ---- Table 3: compound updates, a (record) before b (tail pointer) ----
    WRITE_SEND_FLUSH_TWICE(Update.COMPOUND, Primary.WRITE,
            "Rq Write(a); Rq Send(&a); Rsp flush(&a); ack; Rq Write(b); Rq Send(&b); Rsp flush(&b); ack",
            "Intel GPSPM per update"),
    WRITEIMM_SERVER_FLUSH_TWICE(Update.COMPOUND, Primary.WRITE_IMM,
            "Rq WriteImm(a); Rsp flush(&a); ack; Rq WriteImm(b); Rsp flush(&b); ack", ""),
    SEND_AB_COPY_FLUSH(Update.COMPOUND, Primary.SEND,
            "Rq Send(a,b); Rsp copy + flush(a) then (b); Rsp Send(ack)", "message passing, universal"),
    WRITE_WRITE_FLUSH(Update.COMPOUND, Primary.WRITE,
            "Rq Write(a); Rq Write(b); Rq Flush; Rq Comp(Flush)", ""),
    WRITEIMM_WRITEIMM_FLUSH(Update.COMPOUND, Primary.WRITE_IMM,
            "Rq WriteImm(a); Rq WriteImm(b); Rq Flush; Rq Comp(Flush)", ""),
    SEND_AB_COPY(Update.COMPOUND, Primary.SEND,
            "Rq Send(a,b); Rsp copy(a,b); Rsp Send(ack)", ""),
    SEND_AB_FLUSH(Update.COMPOUND, Primary.SEND,
            "Rq Send(a,b); Rq Flush; Rq Comp(Flush); recovery applies the PM receive buffer", ""),
    SEND_AB(Update.COMPOUND, Primary.SEND,
            "Rq Send(a,b); Rq Comp(Send); recovery applies the PM receive buffer", ""),
    WRITE_WRITE(Update.COMPOUND, Primary.WRITE,
            "Rq Write(a); Rq Write(b); Rq Comp(Write(b))", ""),
    WRITEIMM_WRITEIMM(Update.COMPOUND, Primary.WRITE_IMM,
            "Rq WriteImm(a); Rq WriteImm(b); Rq Comp(WriteImm(b))", ""),
    WRITE_FLUSH_ATOMIC_FLUSH(Update.COMPOUND, Primary.WRITE,
            "Rq Write(a); Rq Flush; Rq Write_atomic(b); Rq Flush; Rq Comp(Flush)", "non-posted WRITE"),
    WRITEIMM_FLUSH_WAIT_TWICE(Update.COMPOUND, Primary.WRITE_IMM,
            "Rq WriteImm(a); Rq Flush; Rq Comp(Flush); Rq WriteImm(b); Rq Flush; Rq Comp(Flush)", ""),
    /** Not a Table 3 row: the paper's alternative to WRITE_atomic when b is longer than 8 bytes (§3.3). */
    WRITE_FLUSH_WAIT_TWICE(Update.COMPOUND, Primary.WRITE,
            "Rq Write(a); Rq Flush; Rq Comp(Flush); Rq Write(b); Rq Flush; Rq Comp(Flush)", "fenced WRITE (§3.3)"),
    /**
     * Not a Table 3 row: the hazard WRITE_atomic exists for (§2): a posted WRITE may be ordered before an earlier
     * non-posted FLUSH at the responder, so b can persist before a.
     */
    WRITE_FLUSH_WRITE_FLUSH(Update.COMPOUND, Primary.WRITE,
            "Rq Write(a); Rq Flush; Rq Write(b); Rq Flush; Rq Comp(Flush)", "posted b may pass the Flush (§2)");

    /** A singleton update (Table 2) or a compound, ordered one (Table 3). */
    public enum Update { SINGLETON, COMPOUND }

    /** The table column: the operation that carries the update. */
    public enum Primary { WRITE, WRITE_IMM, SEND }

    private final Update update;
    private final Primary primary;
    private final String notation;
    private final String alsoKnownAs;

    Method(Update update, Primary primary, String notation, String alsoKnownAs) {
        this.update = update;
        this.primary = primary;
        this.notation = notation;
        this.alsoKnownAs = alsoKnownAs;
    }

    public Update update() {
        return update;
    }

    public Primary primary() {
        return primary;
    }

    /** The sequence in the paper's notation. */
    public String notation() {
        return notation;
    }

    /** Where the store's persistence methods, the Intel seed's GPSPM and APM and other named idioms fall; or empty. */
    public String alsoKnownAs() {
        return alsoKnownAs;
    }

    /** The method's name for the command line and tables: {@code write-flush}. */
    public String label() {
        return name().toLowerCase().replace('_', '-');
    }

    /** Parses {@link #label()} or the constant's name. */
    public static Method parse(String label) {
        for (Method m : values()) {
            if (m.label().equalsIgnoreCase(label.trim()) || m.name().equalsIgnoreCase(label.trim())) {
                return m;
            }
        }
        throw new IllegalArgumentException("method '" + label + "' is none of " + Arrays.stream(values())
                .map(Method::label).toList());
    }

    /** The methods of one table. */
    public static List<Method> of(Update update) {
        return Arrays.stream(values()).filter(m -> m.update == update).toList();
    }
}
