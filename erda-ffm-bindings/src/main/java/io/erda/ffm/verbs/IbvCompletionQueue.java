package io.erda.ffm.verbs;

import java.lang.foreign.MemorySegment;

/**
 * {@code struct ibv_cq *}. {@link #poll} is ibv_poll_cq: the inline
 * {@code cq->context->ops.poll_cq(cq, n, wc)}, with the function pointer read once here; a critical downcall
 * for the real library ({@link VerbsLibrary#criticalDataPath()}).
 */
public final class IbvCompletionQueue implements AutoCloseable {
    private final VerbsLibrary verbs;
    private final MemorySegment cq;
    private final MemorySegment pollCq;
    private final MemorySegment reqNotifyCq;
    private final boolean critical;

    IbvCompletionQueue(IbvContext context, MemorySegment cq) {
        this.verbs = context.verbs();
        this.critical = verbs.criticalDataPath();
        this.cq = cq;
        MemorySegment cqContext = (MemorySegment) Verbs.ibv_cq$context.get(cq, 0L);
        this.pollCq = IbvContext.op(cqContext, Verbs.ibv_context$ops$poll_cq$OFFSET);
        this.reqNotifyCq = IbvContext.op(cqContext, Verbs.ibv_context$ops$req_notify_cq$OFFSET);
    }

    public MemorySegment segment() {
        return cq;
    }

    /** Polls up to {@code into.capacity()} completions; returns how many were written into it. */
    public int poll(WorkCompletions into) {
        int n;
        try {
            n = critical ? (int) VerbsOps.POLL_CQ_CRITICAL.invokeExact(pollCq, cq, into.capacity(), into.segment())
                    : (int) VerbsOps.POLL_CQ.invokeExact(pollCq, cq, into.capacity(), into.segment());
        } catch (Throwable t) {
            throw rethrow(t);
        }
        if (n < 0) {
            throw new VerbsException("ibv_poll_cq", n, -n);
        }
        into.count(n);
        return n;
    }

    /** Arms the CQ for one event on its completion channel. */
    public void requestNotify(boolean solicitedOnly) {
        int rc;
        try {
            rc = (int) VerbsOps.REQ_NOTIFY_CQ.invokeExact(reqNotifyCq, cq, solicitedOnly ? 1 : 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        if (rc != 0) {
            throw new VerbsException("ibv_req_notify_cq", rc, rc);
        }
    }

    /** Acknowledges events taken from the channel; required before {@link #close}. */
    public void acknowledgeEvents(int events) {
        verbs.ackCqEvents(cq, events);
    }

    static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }

    @Override
    public void close() {
        verbs.destroyCq(cq);
    }
}
