package io.erda.bench.compare;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class AxisLabelsTest {

    @Test
    void countsReadWithSiSuffixesNeverInScientificNotation() {
        assertThat(AxisLabels.si(550_000)).isEqualTo("550k");
        assertThat(AxisLabels.si(549_226)).isEqualTo("549k");
        assertThat(AxisLabels.si(1_200_000)).isEqualTo("1.2M");
        assertThat(AxisLabels.si(45_654)).isEqualTo("45.7k");
        assertThat(AxisLabels.si(1500)).isEqualTo("1.5k");
        assertThat(AxisLabels.si(999)).isEqualTo("999");
        assertThat(AxisLabels.si(12.5)).isEqualTo("12.5");
        assertThat(AxisLabels.si(0.25)).isEqualTo("0.25");
        assertThat(AxisLabels.si(0)).isEqualTo("0");
        assertThat(AxisLabels.si(-2000)).isEqualTo("-2k");
    }

    @Test
    void theNinesAxisIsLabelledInPercent() {
        assertThat(AxisLabels.percentile(1)).isEqualTo("0%");
        assertThat(AxisLabels.percentile(10)).isEqualTo("90%");
        assertThat(AxisLabels.percentile(100)).isEqualTo("99%");
        assertThat(AxisLabels.percentile(1000)).isEqualTo("99.9%");
        assertThat(AxisLabels.percentile(100_000)).isEqualTo("99.999%");
        assertThat(AxisLabels.percentile(2)).isEqualTo("50.0%");
        assertThat(AxisLabels.percentile(Math.pow(10, 1.5))).isEqualTo("96.8%");
        assertThat(AxisLabels.percentile(Math.pow(10, 4.5))).isEqualTo("99.9968%");
        assertThat(AxisLabels.percentile(0.1)).isNotEqualTo(AxisLabels.percentile(0.5)).doesNotEndWith("%");
    }
}
