package io.erda.softrnic;

import io.erda.ffm.verbs.SoftwareRnic;

/**
 * The {@link SoftwareRnic} that {@link java.util.ServiceLoader} finds: devices on {@link SoftRnic#shared()}. Every
 * instance hands out devices of that one network, so fabrics opened with {@code verbs.device=soft} in one JVM reach
 * each other however often the service is loaded.
 */
public final class SharedSoftRnic implements SoftwareRnic {
    @Override
    public SoftRnicDevice newDevice() {
        return SoftRnic.shared().newDevice();
    }

    @Override
    public int rdmaCoreVersion() {
        return SoftRnicDevice.RDMA_CORE_VERSION;
    }
}
