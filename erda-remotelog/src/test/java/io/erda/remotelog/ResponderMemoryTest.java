package io.erda.remotelog;

import io.erda.protocol.PmConfiguration;
import io.erda.remotelog.ResponderMemory.Area;
import io.erda.remotelog.ResponderMemory.Kind;
import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;

/** The emulated responder memory keeps, at a power failure, what each configuration's domain holds. */
class ResponderMemoryTest {
    private static final byte[] A = filled(16, (byte) 0xA);

    private static byte[] filled(int n, byte b) {
        byte[] bytes = new byte[n];
        Arrays.fill(bytes, b);
        return bytes;
    }

    private static ResponderMemory memory(String configuration) {
        return new ResponderMemory(PmConfiguration.parse(configuration), new byte[256], 256, 7);
    }

    private static boolean survives(ResponderMemory m, Area area) {
        m.failPower();
        byte[] image = area == Area.LOG ? m.crashImage().log() : m.crashImage().receiveBuffers();
        return Arrays.equals(Arrays.copyOfRange(image, 64, 80), A);
    }

    /** A WRITE and a FLUSH, both completed. */
    private static ResponderMemory writeFlushed(String configuration) {
        ResponderMemory m = memory(configuration);
        long write = m.posted(Kind.POSTED, Area.LOG, 64, A, 0);
        long flush = m.posted(Kind.FLUSH, Area.LOG, 64, null, 0);
        m.completed(write);
        m.completed(flush);
        return m;
    }

    @Test
    void aFlushedWriteIsDurableInDmpWithoutDdio() {
        assertThat(survives(writeFlushed("DMP+!DDIO+DRAM-RQWRB"), Area.LOG)).isTrue();
    }

    @Test
    void aFlushedWriteIsDurableWithDdioOnlyOnceTheResponderFlushesIt() {
        for (long seed = 0; seed < 20; seed++) {
            ResponderMemory m = writeFlushed("DMP+DDIO+DRAM-RQWRB");
            m.flushed(64, 16);
            assertThat(survives(m, Area.LOG)).isTrue();
        }
        boolean everLost = false;
        for (int i = 0; i < 50 && !everLost; i++) {
            ResponderMemory m = new ResponderMemory(PmConfiguration.parse("DMP+DDIO+DRAM-RQWRB"), new byte[256], 256, i);
            long write = m.posted(Kind.POSTED, Area.LOG, 64, A, 0);
            long flush = m.posted(Kind.FLUSH, Area.LOG, 64, null, 0);
            m.completed(write);
            m.completed(flush);
            everLost = !survives(m, Area.LOG);
        }
        assertThat(everLost).as("a Flush leaves DDIO's cache lines outside DMP").isTrue();
    }

    @Test
    void aReceivedWriteIsDurableInWspButNotInMhp() {
        ResponderMemory wsp = memory("WSP+DDIO+DRAM-RQWRB");
        wsp.completed(wsp.posted(Kind.POSTED, Area.LOG, 64, A, 0));
        assertThat(survives(wsp, Area.LOG)).isTrue();

        boolean everLost = false;
        for (int i = 0; i < 50 && !everLost; i++) {
            ResponderMemory mhp = new ResponderMemory(PmConfiguration.parse("MHP+DDIO+DRAM-RQWRB"), new byte[256], 256, i);
            mhp.completed(mhp.posted(Kind.POSTED, Area.LOG, 64, A, 0));
            everLost = !survives(mhp, Area.LOG);
        }
        assertThat(everLost).as("MHP leaves the RNIC's buffers out").isTrue();
    }

    @Test
    void aFlushedSendSurvivesInPmReceiveBuffersAndNeverInDram() {
        for (String c : new String[] {"MHP+DDIO+PM-RQWRB", "MHP+DDIO+DRAM-RQWRB"}) {
            ResponderMemory m = memory(c);
            long send = m.posted(Kind.POSTED, Area.RECEIVE_BUFFERS, 64, A, 1);
            long flush = m.posted(Kind.FLUSH, Area.LOG, 0, null, 0);
            m.completed(send);
            m.completed(flush);
            m.delivered(1);
            assertThat(survives(m, Area.RECEIVE_BUFFERS)).as(c).isEqualTo(c.contains("PM-RQWRB"));
        }
    }

    @Test
    void theResponderStoresAreDurableInMhpAndNeedItsFlushInDmp() {
        ResponderMemory mhp = memory("MHP+!DDIO+DRAM-RQWRB");
        mhp.stored(64, A);
        assertThat(survives(mhp, Area.LOG)).isTrue();
        ResponderMemory dmp = memory("DMP+!DDIO+DRAM-RQWRB");
        dmp.stored(64, A);
        dmp.flushed(64, 16);
        assertThat(survives(dmp, Area.LOG)).isTrue();
    }

    @Test
    void afterThePowerFailureNothingIsAcknowledgedOrApplied() {
        ResponderMemory m = memory("WSP+DDIO+PM-RQWRB");
        m.armPowerFailure(1); // before the write is even posted
        m.completed(m.posted(Kind.POSTED, Area.LOG, 64, A, 0));
        m.stored(64, A);
        m.flushed(64, 16);
        assertThat(m.powerOn()).isFalse();
        assertThat(m.acknowledge()).isFalse();
        assertThat(m.crashImage().log()).containsOnly((byte) 0);
    }
}
