package io.erda.fabric.tcp;

import io.erda.fabric.RegisterOptions;
import io.erda.fabric.emulated.EmulatedRegion;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.LongAdder;

/** A registered segment of a tcp fabric; the same key serves as lkey and rkey. */
final class TcpRegion extends EmulatedRegion<TcpFabric> {
    private final LongAdder remoteBytesWritten = new LongAdder();

    TcpRegion(TcpFabric fabric, MemorySegment segment, RegisterOptions options, int key) {
        super(fabric, segment, options, key);
    }

    void countRemoteWrite(long bytes) {
        remoteBytesWritten.add(bytes);
    }

    @Override
    public long remoteBytesWritten() {
        return remoteBytesWritten.sum();
    }

    @Override
    public void close() {
        if (markClosed()) {
            fabric().deregister(this);
        }
    }
}
