package io.erda.remotelog;

import io.erda.remotelog.Method.Primary;
import io.erda.remotelog.Method.Update;
import io.erda.remotelog.Taxonomy.Verdict;
import org.junit.jupiter.api.Test;

import java.util.EnumSet;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class TaxonomyTest {

    @Test
    void twelveConfigurationsWithThePapersNames() {
        assertThat(Configuration.all()).hasSize(12).doesNotHaveDuplicates();
        assertThat(Configuration.all().getFirst().label()).isEqualTo("DMP+DDIO+DRAM-RQWRB");
        assertThat(Configuration.parse("wsp+¬ddio+pm-rqwrb")).isEqualTo(new Configuration(Domain.WSP, false, true));
    }

    @Test
    void everyPrescribedMethodIsCorrectInItsCell() {
        int scenarios = 0;
        for (Configuration c : Configuration.all()) {
            for (Update u : Update.values()) {
                for (Primary p : Primary.values()) {
                    Method m = Taxonomy.prescribed(c, u, p);
                    assertThat(m.update()).as("%s %s %s", c, u, p).isEqualTo(u);
                    assertThat(m.primary()).as("%s %s %s", c, u, p).isEqualTo(p);
                    assertThat(Taxonomy.verdict(c, m)).as("%s in %s", m, c).isEqualTo(Verdict.CORRECT);
                    scenarios++;
                }
            }
        }
        assertThat(scenarios).isEqualTo(72);
    }

    @Test
    void tenSingletonMethodsArePrescribedAsThePaperCounts() {
        Set<Method> singleton = EnumSet.noneOf(Method.class);
        for (Configuration c : Configuration.all()) {
            for (Primary p : Primary.values()) {
                singleton.add(Taxonomy.prescribed(c, Update.SINGLETON, p));
            }
        }
        assertThat(singleton).containsExactlyInAnyOrderElementsOf(Method.of(Update.SINGLETON));
    }

    @Test
    void oneSidedWritesWithDdioInDmpAreNeverEnough() {
        Configuration dmpDdio = Configuration.parse("DMP+DDIO+PM-RQWRB");
        for (Method m : Method.values()) {
            boolean responderFlushes = m.notation().contains("flush("); // the responder's local flush, not Rq Flush
            assertThat(Taxonomy.verdict(dmpDdio, m)).as("%s", m)
                    .isEqualTo(responderFlushes ? Verdict.CORRECT : Verdict.INCORRECT);
        }
    }

    @Test
    void theStoresMethodsFallWhereTheArchitectureSays() {
        assertThat(Method.WRITE.alsoKnownAs()).contains("Erda wsp");
        assertThat(Method.WRITE_FLUSH.alsoKnownAs()).contains("read-after-write").contains("APM");
        assertThat(Method.WRITE_SEND_FLUSH.alsoKnownAs()).contains("server-flush").contains("GPSPM");
        assertThat(Taxonomy.verdict(Configuration.parse("DMP+!DDIO+DRAM-RQWRB"), Method.WRITE_FLUSH))
                .isEqualTo(Verdict.CORRECT);
        assertThat(Taxonomy.verdict(Configuration.parse("MHP+DDIO+DRAM-RQWRB"), Method.WRITE))
                .isEqualTo(Verdict.INCORRECT);
    }

    @Test
    void onIwarpWspNeedsMhpsMethods() {
        Configuration wsp = Configuration.parse("WSP+DDIO+DRAM-RQWRB");
        assertThat(Taxonomy.verdict(wsp, Method.WRITE, Transport.IWARP)).isEqualTo(Verdict.INCORRECT);
        assertThat(Taxonomy.verdict(wsp, Method.WRITE_FLUSH, Transport.IWARP)).isEqualTo(Verdict.CORRECT);
        assertThat(Taxonomy.prescribed(wsp, Update.COMPOUND, Primary.WRITE, Transport.IWARP))
                .isEqualTo(Method.WRITE_WRITE_FLUSH);
        Configuration dmp = Configuration.parse("DMP+DDIO+DRAM-RQWRB");
        for (Method m : Method.values()) {
            assertThat(Taxonomy.verdict(dmp, m, Transport.IWARP)).isEqualTo(Taxonomy.verdict(dmp, m));
        }
    }
}
