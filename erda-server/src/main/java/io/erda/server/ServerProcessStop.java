package io.erda.server;

import java.util.concurrent.TimeUnit;

/**
 * How a launcher stops a server process it started ({@link ErdaServerMain} or a cluster member): SIGTERM, so that
 * the shutdown hook closes the store, and SIGKILL if it has not exited within 10 s; or SIGKILL at once, the crash
 * the tests inflict. Both wait until the process is gone (at most 30 s after the SIGKILL).
 */
public final class ServerProcessStop {
    private static final long GRACE_SECONDS = 10;
    private static final long GONE_SECONDS = 30;

    private ServerProcessStop() {
    }

    /** kill -9 ({@link Process#destroyForcibly()} is SIGKILL on Linux), then waits until the process is gone. */
    public static void kill(Process process) {
        process.destroyForcibly();
        try {
            process.waitFor(GONE_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** SIGTERM, then {@link #kill} if the process is still alive after 10 s (or the wait is interrupted). */
    public static void stop(Process process) {
        if (!process.isAlive()) {
            return;
        }
        process.destroy();
        try {
            if (!process.waitFor(GRACE_SECONDS, TimeUnit.SECONDS)) {
                kill(process);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            kill(process);
        }
    }
}
