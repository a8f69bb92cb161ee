package io.erda.ffm.verbs;

/**
 * A verbs or rdma_cm call failed: a NULL return or a nonzero status. Carries the C function name,
 * the returned status (verbs returns either -1 with errno set, or the errno value itself) and the
 * errno captured right after the call, with its strerror text.
 */
public final class VerbsException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String function;
    private final int returnCode;
    private final int errno;

    public VerbsException(String function, int returnCode, int errno) {
        this(function, returnCode, errno, "");
    }

    /** @param detail appended to the message, e.g. which work request of a chain was rejected */
    public VerbsException(String function, int returnCode, int errno, String detail) {
        super(function + " failed: rc=" + returnCode + ", " + Errno.describe(errno) + (detail.isEmpty() ? "" : ", " + detail));
        this.function = function;
        this.returnCode = returnCode;
        this.errno = errno;
    }

    /** For NULL-returning functions: only errno says why. */
    public static VerbsException nullReturn(String function, int errno) {
        return new VerbsException(function, 0, errno);
    }

    public String function() {
        return function;
    }

    public int returnCode() {
        return returnCode;
    }

    public int errno() {
        return errno;
    }
}
