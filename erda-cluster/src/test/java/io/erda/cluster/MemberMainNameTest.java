package io.erda.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.erda.cluster.harness.MemberProcess;
import org.junit.jupiter.api.Test;

/** The harness starts member processes by class name (it does not depend on this module): the name must be right. */
class MemberMainNameTest {
    @Test
    void theHarnessStartsThisModulesMain() {
        assertThat(MemberProcess.MEMBER_MAIN).isEqualTo(ClusterServerMain.class.getName());
    }
}
