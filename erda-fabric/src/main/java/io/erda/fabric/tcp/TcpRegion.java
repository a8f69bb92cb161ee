package io.erda.fabric.tcp;

import io.erda.fabric.Access;
import io.erda.fabric.MemoryRegion;
import io.erda.fabric.RegisterOptions;
import io.erda.fabric.soft.RegionTable;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.LongAdder;

/** A registered segment of a tcp fabric; the same key serves as lkey and rkey. */
final class TcpRegion implements MemoryRegion, RegionTable.Entry {
    private final TcpFabric fabric;
    private final MemorySegment segment;
    private final RegisterOptions options;
    private final int key;
    private final LongAdder remoteBytesWritten = new LongAdder();
    private volatile boolean closed;

    TcpRegion(TcpFabric fabric, MemorySegment segment, RegisterOptions options, int key) {
        this.fabric = fabric;
        this.segment = segment;
        this.options = options;
        this.key = key;
    }

    TcpFabric fabric() {
        return fabric;
    }

    boolean isOpen() {
        return !closed;
    }

    @Override
    public MemorySegment segment() {
        return segment;
    }

    @Override
    public RegisterOptions options() {
        return options;
    }

    // Both supertypes declare address() and length(); MemoryRegion's defaults are the answer.
    @Override
    public long address() {
        return MemoryRegion.super.address();
    }

    @Override
    public long length() {
        return MemoryRegion.super.length();
    }

    @Override
    public boolean allows(Access access) {
        return options.allows(access);
    }

    @Override
    public int lkey() {
        return key;
    }

    @Override
    public int rkey() {
        return key;
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
        if (!closed) {
            closed = true;
            fabric.deregister(this);
        }
    }
}
