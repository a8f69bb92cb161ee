package io.erda.server.platform;

import java.util.Objects;
import java.util.concurrent.ThreadFactory;

/**
 * Starts the server's long-lived threads from one {@link ThreadFactory} (an embedding application's, or platform
 * threads): each is named and made a daemon before it starts.
 */
public final class DaemonThreads {
    private final ThreadFactory factory;

    public DaemonThreads(ThreadFactory factory) {
        this.factory = Objects.requireNonNull(factory, "factory");
    }

    /** Starts {@code body} on a daemon thread named {@code name}. */
    public Thread start(String name, Runnable body) {
        Thread thread = factory.newThread(body);
        if (thread == null) {
            throw new IllegalStateException("the thread factory made no thread for " + name);
        }
        thread.setName(name);
        thread.setDaemon(true);
        thread.start();
        return thread;
    }
}
