package io.erda.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class PmConfigurationTest {

    @Test
    void everyConfigurationRoundTripsThroughItsLabelAndItsWireCode() {
        for (PmConfiguration c : PmConfiguration.all()) {
            assertThat(PmConfiguration.parse(c.label())).isEqualTo(c);
            assertThat(PmConfiguration.ofCode(c.code())).isEqualTo(c);
        }
        assertThat(PmConfiguration.all().stream().map(PmConfiguration::code)).containsExactly(1, 2, 3, 4, 5, 6, 7, 8,
                9, 10, 11, 12);
        assertThat(PmConfiguration.ofCode(0)).isNull();
        assertThat(PmConfiguration.parse("dmp+noddio+pm-rqwrb"))
                .isEqualTo(new PmConfiguration(PersistenceDomain.DMP, false, true));
    }

    @Test
    void anUnknownLabelOrCodeIsRefusedNamingIt() {
        assertThatThrownBy(() -> PmConfiguration.parse("DMP+DDIO")).hasMessageContaining("'DMP+DDIO'")
                .hasMessageContaining("DMP+DDIO+DRAM-RQWRB");
        assertThatThrownBy(() -> PmConfiguration.ofCode(13)).isInstanceOf(WireFormatException.class)
                .hasMessageContaining("13");
    }

    /** Paper §3.1: what each domain keeps, and DDIO keeping a Flush from reaching DMP. */
    @Test
    void whatSurvivesFollowsTheDomainAndDdio() {
        for (PmConfiguration c : PmConfiguration.all()) {
            assertThat(c.keepsOneSidedOnceReceived()).as("%s", c).isEqualTo(c.domain() == PersistenceDomain.WSP);
            assertThat(c.keepsOneSidedOncePlaced()).as("%s", c).isEqualTo(c.domain() != PersistenceDomain.DMP);
            assertThat(c.keepsOneSidedOnceFenced()).as("%s", c)
                    .isEqualTo(!(c.domain() == PersistenceDomain.DMP && c.ddio()));
        }
    }

    /** Each method is correct in the configuration it is made for, the default of the store's emulation. */
    @Test
    void eachMethodIsCorrectWhereItIsMadeFor() {
        for (PersistenceMethod m : PersistenceMethod.values()) {
            assertThat(m.correctIn(PmConfiguration.madeFor(m))).as("%s", m).isTrue();
        }
        assertThat(PersistenceMethod.WSP.correctIn(PmConfiguration.parse("MHP+DDIO+PM-RQWRB"))).isFalse();
        assertThat(PersistenceMethod.READ_AFTER_WRITE.correctIn(PmConfiguration.parse("DMP+DDIO+PM-RQWRB"))).isFalse();
    }
}
