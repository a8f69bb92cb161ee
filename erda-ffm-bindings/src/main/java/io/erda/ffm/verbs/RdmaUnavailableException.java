package io.erda.ffm.verbs;

/**
 * RDMA cannot be used on this host: a library is missing, a symbol is absent, or there is no
 * device. One message, no native stack trace; callers typically fall back to another provider.
 */
public final class RdmaUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public RdmaUnavailableException(String message) {
        super(message);
    }

    public RdmaUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
