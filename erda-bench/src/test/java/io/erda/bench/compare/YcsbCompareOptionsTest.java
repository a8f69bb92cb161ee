package io.erda.bench.compare;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class YcsbCompareOptionsTest {

    @Test
    void regionSizeTakesBytesOrASuffixAsErdaServerDoes() {
        YcsbCompare bytes = new YcsbCompare();
        new CommandLine(bytes).parseArgs("--region-size", "4194304");
        assertThat(bytes.regionSize).isEqualTo(4L << 20);
        YcsbCompare suffixed = new YcsbCompare();
        new CommandLine(suffixed).parseArgs("--region-size", "64m");
        assertThat(suffixed.regionSize).isEqualTo(64L << 20);
        assertThatThrownBy(() -> new CommandLine(new YcsbCompare()).parseArgs("--region-size", "lots"))
                .hasMessageContaining("'lots' is not a size");
    }
}
