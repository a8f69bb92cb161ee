package io.erda.bench.faults;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class CampaignValueTest {

    @Test
    void aValueProvesItsWriterKeyAndSequence() {
        byte[] v = CampaignValue.encode(3, 17, (5L << 32) | 9, 500);
        CampaignValue.Check c = CampaignValue.check(3, 17, v);
        assertThat(c.ok()).as(c.problem()).isTrue();
        assertThat(c.seq()).isEqualTo((5L << 32) | 9);
        assertThat(CampaignValue.check(3, 17, CampaignValue.encode(3, 17, 1, CampaignValue.HEADER)).ok()).isTrue();
    }

    @Test
    void damageAnywhereCuttingAndMixingAreTornAnotherKeysValueForeign() {
        byte[] v = CampaignValue.encode(1, 2, 42, 300);
        for (int i = 0; i < v.length; i += 7) {
            byte[] d = v.clone();
            d[i] ^= 1;
            assertThat(CampaignValue.check(1, 2, d).ok()).as("byte %d flipped", i).isFalse();
        }
        assertThat(CampaignValue.check(1, 2, Arrays.copyOf(v, 299)).problem()).startsWith("torn: 299 bytes");
        byte[] mixed = v.clone();
        System.arraycopy(CampaignValue.encode(1, 2, 43, 300), 200, mixed, 200, 100);
        assertThat(CampaignValue.check(1, 2, mixed).problem()).startsWith("torn: byte 2");
        assertThat(CampaignValue.check(1, 3, v).problem()).isEqualTo("foreign: value of writer 1 key 2");
        assertThat(CampaignValue.check(1, 2, new byte[30]).problem()).startsWith("torn: magic");
    }
}
