package io.erda.ffm.verbs;

/**
 * What an RC connection is brought up with (INIT → RTR → RTS). Defaults are the usual perftest
 * values; {@code mtu} is a {@code Verbs.IBV_MTU_*} enum value, not bytes.
 */
public record ConnectionParameters(int port, int gidIndex, int mtu, int accessFlags, int maxRdAtomic,
                                   int minRnrTimer, int timeout, int retryCount, int rnrRetry) {
    public static ConnectionParameters defaults() {
        return new ConnectionParameters(1, 0, Verbs.IBV_MTU_1024,
                Verbs.IBV_ACCESS_LOCAL_WRITE | Verbs.IBV_ACCESS_REMOTE_READ | Verbs.IBV_ACCESS_REMOTE_WRITE
                        | Verbs.IBV_ACCESS_REMOTE_ATOMIC,
                16, 12, 14, 7, 7);
    }

    public ConnectionParameters withPort(int newPort) {
        return new ConnectionParameters(newPort, gidIndex, mtu, accessFlags, maxRdAtomic, minRnrTimer, timeout,
                retryCount, rnrRetry);
    }

    public ConnectionParameters withGidIndex(int newGidIndex) {
        return new ConnectionParameters(port, newGidIndex, mtu, accessFlags, maxRdAtomic, minRnrTimer, timeout,
                retryCount, rnrRetry);
    }
}
