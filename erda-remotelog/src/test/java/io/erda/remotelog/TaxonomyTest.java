package io.erda.remotelog;

import io.erda.protocol.PersistenceDomain;
import io.erda.protocol.PersistenceMethod;
import io.erda.protocol.PmConfiguration;
import io.erda.remotelog.Method.Primary;
import io.erda.remotelog.Method.Update;
import io.erda.remotelog.Taxonomy.Verdict;
import org.junit.jupiter.api.Test;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class TaxonomyTest {

    @Test
    void twelveConfigurationsWithThePapersNames() {
        assertThat(PmConfiguration.all()).hasSize(12).doesNotHaveDuplicates();
        assertThat(PmConfiguration.all().getFirst().label()).isEqualTo("DMP+DDIO+DRAM-RQWRB");
        assertThat(PmConfiguration.parse("wsp+¬ddio+pm-rqwrb")).isEqualTo(new PmConfiguration(PersistenceDomain.WSP, false, true));
    }

    /**
     * The store's three persistence methods are three rows of Table 2, and the store's own verdicts (erda-protocol's
     * {@code PersistenceMethod.correctIn}, which its power-failure emulation is tested against) are the taxonomy's.
     */
    @Test
    void theStoresMethodsAreThreeRowsWithTheTaxonomysVerdicts() {
        Map<PersistenceMethod, Method> rows = Map.of(PersistenceMethod.WSP, Method.WRITE,
                PersistenceMethod.READ_AFTER_WRITE, Method.WRITE_FLUSH,
                PersistenceMethod.SERVER_FLUSH, Method.WRITE_SEND_FLUSH);
        int incorrect = 0;
        for (PmConfiguration c : PmConfiguration.all()) {
            for (var row : rows.entrySet()) {
                boolean correct = Taxonomy.verdict(c, row.getValue()) == Verdict.CORRECT;
                assertThat(row.getKey().correctIn(c)).as("%s (%s) in %s", row.getKey().option(), row.getValue(), c)
                        .isEqualTo(correct);
                assertThat(row.getKey().reasonIn(c)).startsWith(correct ? "correct" : "incorrect");
                assertThat(row.getValue().alsoKnownAs()).contains("Erda " + row.getKey().option());
                incorrect += correct ? 0 : 1;
            }
        }
        assertThat(incorrect).as("wsp outside the 4 WSP configurations, read-after-write in the 2 DMP+DDIO ones")
                .isEqualTo(8 + 2);
    }

    @Test
    void everyPrescribedMethodIsCorrectInItsCell() {
        int scenarios = 0;
        for (PmConfiguration c : PmConfiguration.all()) {
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
        for (PmConfiguration c : PmConfiguration.all()) {
            for (Primary p : Primary.values()) {
                singleton.add(Taxonomy.prescribed(c, Update.SINGLETON, p));
            }
        }
        assertThat(singleton).containsExactlyInAnyOrderElementsOf(Method.of(Update.SINGLETON));
    }

    @Test
    void oneSidedWritesWithDdioInDmpAreNeverEnough() {
        PmConfiguration dmpDdio = PmConfiguration.parse("DMP+DDIO+PM-RQWRB");
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
        assertThat(Taxonomy.verdict(PmConfiguration.parse("DMP+!DDIO+DRAM-RQWRB"), Method.WRITE_FLUSH))
                .isEqualTo(Verdict.CORRECT);
        assertThat(Taxonomy.verdict(PmConfiguration.parse("MHP+DDIO+DRAM-RQWRB"), Method.WRITE))
                .isEqualTo(Verdict.INCORRECT);
    }

    @Test
    void onIwarpWspNeedsMhpsMethods() {
        PmConfiguration wsp = PmConfiguration.parse("WSP+DDIO+DRAM-RQWRB");
        assertThat(Taxonomy.verdict(wsp, Method.WRITE, Transport.IWARP)).isEqualTo(Verdict.INCORRECT);
        assertThat(Taxonomy.verdict(wsp, Method.WRITE_FLUSH, Transport.IWARP)).isEqualTo(Verdict.CORRECT);
        assertThat(Taxonomy.prescribed(wsp, Update.COMPOUND, Primary.WRITE, Transport.IWARP))
                .isEqualTo(Method.WRITE_WRITE_FLUSH);
        PmConfiguration dmp = PmConfiguration.parse("DMP+DDIO+DRAM-RQWRB");
        for (Method m : Method.values()) {
            assertThat(Taxonomy.verdict(dmp, m, Transport.IWARP)).isEqualTo(Taxonomy.verdict(dmp, m));
        }
    }
}
