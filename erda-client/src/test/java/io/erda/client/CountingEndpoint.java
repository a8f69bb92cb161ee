package io.erda.client;

import io.erda.fabric.CompletionQueue;
import io.erda.fabric.Endpoint;
import io.erda.fabric.Fabric;
import io.erda.fabric.RecvRequest;
import io.erda.fabric.WorkRequest;
import java.net.URI;
import java.util.concurrent.atomic.AtomicLong;

/** Counts the send-side work requests posted on an endpoint, to prove that nothing was sent. */
final class CountingEndpoint implements Endpoint {
    private final Endpoint delegate;
    private final AtomicLong posted;

    CountingEndpoint(Endpoint delegate, AtomicLong posted) {
        this.delegate = delegate;
        this.posted = posted;
    }

    @Override
    public void post(WorkRequest request) {
        posted.incrementAndGet();
        delegate.post(request);
    }

    @Override
    public void connect(URI uri, byte[] privateData) {
        delegate.connect(uri, privateData);
    }

    @Override
    public void postRecv(RecvRequest request) {
        delegate.postRecv(request);
    }

    @Override
    public CompletionQueue sendQueue() {
        return delegate.sendQueue();
    }

    @Override
    public CompletionQueue recvQueue() {
        return delegate.recvQueue();
    }

    @Override
    public State state() {
        return delegate.state();
    }

    @Override
    public URI peer() {
        return delegate.peer();
    }

    @Override
    public byte[] peerPrivateData() {
        return delegate.peerPrivateData();
    }

    @Override
    public Fabric fabric() {
        return delegate.fabric();
    }

    @Override
    public void abort() {
        delegate.abort();
    }

    @Override
    public void close() {
        delegate.close();
    }
}
