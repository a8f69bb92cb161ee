package io.erda.bench.compare;

import java.math.BigDecimal;
import java.util.Locale;

/** Tick labels a reader takes in at a glance: {@code 550k}, {@code 1.2M}, {@code 99.9%}; never {@code 5.5E5}. */
final class AxisLabels {

    private AxisLabels() {
    }

    /** {@code v} with an SI suffix (k, M, G) and at most three significant digits: 550000 is {@code 550k}. */
    static String si(double v) {
        double a = Math.abs(v);
        String[] suffixes = {"", "k", "M", "G"};
        int i = 0;
        while (a >= 999.5 && i < suffixes.length - 1) {
            a /= 1000;
            v /= 1000;
            i++;
        }
        String digits = a == 0 ? "0" : a >= 99.5 ? String.format(Locale.ROOT, "%.0f", v)
            : a >= 9.95 ? String.format(Locale.ROOT, "%.1f", v) : String.format(Locale.ROOT, "%.2f", v);
        if (digits.contains(".")) {
            digits = digits.replaceAll("0+$", "").replaceAll("\\.$", "");
        }
        return digits + suffixes[i];
    }

    /**
     * The percentile at {@code inverseTail} = 1 / (1 - p) on a "nines" axis: 1 is {@code 0%}, 10 {@code 90%},
     * 1000 {@code 99.9%}.
     */
    static String percentile(double inverseTail) {
        if (Math.abs(inverseTail - 1) < 1e-9) {
            return "0%";
        }
        if (inverseTail < 1) {
            // below 0%: no percentile; XChart asks for ticks just outside the data, and needs their labels distinct
            return String.format(Locale.ROOT, "(%.3g)", inverseTail);
        }
        double p = 100 * (1 - 1 / inverseTail);
        long decade = Math.round(Math.log10(inverseTail));
        if (Math.abs(inverseTail - Math.pow(10, decade)) < 1e-6 * inverseTail) {
            // 100 - 10^(2 - decade), exactly: 90, 99, 99.9, ...
            return BigDecimal.valueOf(100).subtract(BigDecimal.ONE.scaleByPowerOfTen((int) (2 - decade)))
                .stripTrailingZeros().toPlainString() + "%";
        }
        // one decimal more than the nines it has: 96.8%, 99.68%, 99.968%
        int decimals = Math.max(1, (int) Math.ceil(Math.log10(inverseTail)) - 1);
        return String.format(Locale.ROOT, "%." + decimals + "f", p) + "%";
    }
}
