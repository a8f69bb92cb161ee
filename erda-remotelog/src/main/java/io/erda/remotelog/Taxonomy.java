package io.erda.remotelog;

import io.erda.protocol.PersistenceDomain;
import io.erda.protocol.PmConfiguration;
import io.erda.remotelog.Method.Primary;
import io.erda.remotelog.Method.Update;

/**
 * The paper's verdicts: which {@link Method} each of the 72 scenarios (12 configurations × Write / WriteImm / Send ×
 * singleton / compound) prescribes, transcribed from Tables 2 and 3, and whether a method is enough in a configuration,
 * from the reasoning of §3.2 and §3.3 that the tables summarize. A method the paper prescribes for a cell is correct
 * there ({@code TaxonomyTest} checks the two agree); a method stronger than needed is correct too (message passing
 * with a responder flush is universal, §3.4); one weaker than needed is incorrect: the paper's point is that it
 * silently loses data at a power failure.
 */
public final class Taxonomy {

    /** Correct: an acknowledged append survives any power failure. Incorrect: one can be lost or torn. */
    public enum Verdict { CORRECT, INCORRECT }

    private Taxonomy() {
    }

    /** The method the paper's table prescribes for this scenario (InfiniBand or RoCE). */
    public static Method prescribed(PmConfiguration c, Update update, Primary primary) {
        boolean dmpDdio = c.domain() == PersistenceDomain.DMP && c.ddio();
        boolean dmpNoDdio = c.domain() == PersistenceDomain.DMP && !c.ddio();
        boolean singleton = update == Update.SINGLETON;
        return switch (primary) {
            // Table 2/3, Write columns: DMP+DDIO message exchange with a responder flush; DMP+!DDIO Write and Flush
            // (compound: Flush, then a non-posted Write_atomic of b, then Flush); MHP Write(s) then Flush; WSP the
            // Write's completion (InfiniBand/RoCE: a completion means the responder's RNIC received it).
            case WRITE -> dmpDdio ? (singleton ? Method.WRITE_SEND_FLUSH : Method.WRITE_SEND_FLUSH_TWICE)
                    : dmpNoDdio ? (singleton ? Method.WRITE_FLUSH : Method.WRITE_FLUSH_ATOMIC_FLUSH)
                    : c.domain() == PersistenceDomain.MHP ? (singleton ? Method.WRITE_FLUSH : Method.WRITE_WRITE_FLUSH)
                    : (singleton ? Method.WRITE : Method.WRITE_WRITE);
            // WriteImm columns: as Write, but the responder learns of the update from the immediate data, so DMP+DDIO
            // needs no separate Send; there is no atomic WriteImm, so DMP+!DDIO compound waits for the first Flush.
            case WRITE_IMM -> dmpDdio ? (singleton ? Method.WRITEIMM_SERVER_FLUSH : Method.WRITEIMM_SERVER_FLUSH_TWICE)
                    : dmpNoDdio ? (singleton ? Method.WRITEIMM_FLUSH : Method.WRITEIMM_FLUSH_WAIT_TWICE)
                    : c.domain() == PersistenceDomain.MHP ? (singleton ? Method.WRITEIMM_FLUSH : Method.WRITEIMM_WRITEIMM_FLUSH)
                    : (singleton ? Method.WRITEIMM : Method.WRITEIMM_WRITEIMM);
            // Send columns: a PM receive buffer makes the Send itself the update where the placed message is durable
            // (Flush: DMP+!DDIO, MHP; the completion: WSP); otherwise message passing, with a responder flush of its
            // copy in DMP and without in MHP and WSP.
            case SEND -> {
                if (c.pmReceiveBuffers() && !dmpDdio) {
                    if (c.domain() == PersistenceDomain.WSP) {
                        yield singleton ? Method.SEND : Method.SEND_AB;
                    }
                    yield singleton ? Method.SEND_FLUSH : Method.SEND_AB_FLUSH;
                }
                if (c.domain() == PersistenceDomain.DMP) {
                    yield singleton ? Method.SEND_COPY_FLUSH : Method.SEND_AB_COPY_FLUSH;
                }
                yield singleton ? Method.SEND_COPY : Method.SEND_AB_COPY;
            }
        };
    }

    /**
     * The prescription over {@code transport}: on iWARP the WSP configurations take MHP's methods ("the methods for
     * remote persistence for WSP essentially mimic the corresponding methods for MHP on iWARP", §3.2).
     */
    public static Method prescribed(PmConfiguration c, Update update, Primary primary, Transport transport) {
        return prescribed(asOn(c, transport), update, primary);
    }

    /** Whether {@code method} is enough in {@code c} over {@code transport}. */
    public static Verdict verdict(PmConfiguration c, Method method, Transport transport) {
        return reason(c, method, transport).startsWith("correct") ? Verdict.CORRECT : Verdict.INCORRECT;
    }

    /** {@link #reason(PmConfiguration, Method)} over {@code transport}. */
    public static String reason(PmConfiguration c, Method method, Transport transport) {
        PmConfiguration as = asOn(c, transport);
        return as.equals(c) ? reason(c, method)
                : reason(as, method) + " (WSP on iWARP is as MHP: a completion does not say the RNIC received it)";
    }

    private static PmConfiguration asOn(PmConfiguration c, Transport transport) {
        return transport == Transport.IWARP && c.domain() == PersistenceDomain.WSP
                ? new PmConfiguration(PersistenceDomain.MHP, c.ddio(), c.pmReceiveBuffers()) : c;
    }

    /** Whether {@code method} is enough in {@code c} (InfiniBand or RoCE). */
    public static Verdict verdict(PmConfiguration c, Method method) {
        return reason(c, method).startsWith("correct") ? Verdict.CORRECT : Verdict.INCORRECT;
    }

    /** Why {@code method} is (or is not) enough in {@code c}, in a sentence that starts with the verdict. */
    public static String reason(PmConfiguration c, Method method) {
        PersistenceDomain d = c.domain();
        boolean placedIsDurable = c.keepsOneSidedOncePlaced();     // MHP, WSP: placed data is in the domain
        boolean flushReachesDomain = c.keepsOneSidedOnceFenced();  // §3.1.2: with DDIO, Flush stops in the cache
        return switch (method) {
            case WRITE_SEND_FLUSH, WRITEIMM_SERVER_FLUSH, SEND_COPY_FLUSH, WRITE_SEND_FLUSH_TWICE,
                 WRITEIMM_SERVER_FLUSH_TWICE, SEND_AB_COPY_FLUSH ->
                    "correct everywhere: the responder flushes the placed update itself before it acknowledges (§3.4)";
            case WRITE_FLUSH, WRITEIMM_FLUSH, WRITE_FLUSH_ATOMIC_FLUSH, WRITEIMM_FLUSH_WAIT_TWICE,
                 WRITE_FLUSH_WAIT_TWICE -> flushReachesDomain
                    ? "correct: the Flush completes only once what precedes it is in the persistence domain"
                    : "incorrect: with DDIO in DMP the Flush leaves the update in the processor cache (§3.2)";
            case WRITE_WRITE_FLUSH, WRITEIMM_WRITEIMM_FLUSH, WRITE_FLUSH_WRITE_FLUSH -> placedIsDurable
                    ? "correct: in " + d + " in-order placement is in-order persistence (§3.3)"
                    : c.ddio() ? "incorrect: with DDIO in DMP the Flush leaves both updates in the processor cache"
                    : "incorrect: in DMP placed updates become durable out of order, so b may persist before a (§2)";
            case SEND_COPY, SEND_AB_COPY -> placedIsDurable
                    ? "correct: in " + d + " the responder's stores are durable once made"
                    : "incorrect: in DMP the responder's copy stays in its cache unless it flushes it";
            case SEND_FLUSH, SEND_AB_FLUSH -> !c.pmReceiveBuffers()
                    ? "incorrect: the message waits in a DRAM receive buffer until the responder copies it"
                    : flushReachesDomain
                    ? "correct: the Flush makes the message durable in the PM receive buffer; recovery applies it"
                    : "incorrect: with DDIO in DMP the Flush leaves the message in the processor cache (§3.3)";
            case SEND, SEND_AB -> d == PersistenceDomain.WSP && c.pmReceiveBuffers()
                    ? "correct: in WSP a received message is durable, and its receive buffer is PM"
                    : !c.pmReceiveBuffers()
                    ? "incorrect: the message waits in a DRAM receive buffer until the responder copies it"
                    : "incorrect: outside WSP a Send's completion means only that the RNIC received it";
            case WRITE, WRITEIMM, WRITE_WRITE, WRITEIMM_WRITEIMM -> c.keepsOneSidedOnceReceived()
                    ? "correct: in WSP what the RNIC received is durable, and the completion says it was received"
                    : "incorrect: outside WSP a completion means only that the RNIC received it, not that it was placed";
        };
    }
}
