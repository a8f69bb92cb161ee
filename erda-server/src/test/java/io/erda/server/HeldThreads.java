package io.erda.server;

import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;

/**
 * A server's thread factory ({@link ServerHooks#withThreads}) that holds the threads of the given names before their
 * body runs, until {@link #release}: a baseline's applier or poller held so, its writes stay pending. A held thread
 * interrupted (the server closing) ends without running its body.
 */
final class HeldThreads implements ThreadFactory {
    private final Set<String> names;
    private final CountDownLatch released = new CountDownLatch(1);

    HeldThreads(String... names) {
        this.names = Set.of(names);
    }

    @Override
    public Thread newThread(Runnable body) {
        return Thread.ofPlatform().unstarted(() -> {
            if (names.contains(Thread.currentThread().getName())) {
                try {
                    released.await();
                } catch (InterruptedException e) {
                    return;
                }
            }
            body.run();
        });
    }

    /** Lets the held threads run. */
    void release() {
        released.countDown();
    }

    ServerHooks hooks() {
        return ServerHooks.NONE.withThreads(this);
    }
}
