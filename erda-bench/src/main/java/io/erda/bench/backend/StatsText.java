package io.erda.bench.backend;

import java.util.LinkedHashMap;
import java.util.Map;

/** A STATS reply's "name=value" lines as numbers; lines whose value is not an integer are left out. */
public final class StatsText {

    private StatsText() {
    }

    public static Map<String, Long> parse(Map<String, String> lines) {
        Map<String, Long> stats = new LinkedHashMap<>();
        lines.forEach((name, value) -> {
            try {
                stats.put(name, Long.parseLong(value.strip()));
            } catch (NumberFormatException notACounter) {
                // e.g. a version string: not a counter.
            }
        });
        return stats;
    }

    public static Map<String, Long> parse(String text) {
        Map<String, String> lines = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0) {
                lines.put(line.substring(0, eq).strip(), line.substring(eq + 1));
            }
        }
        return parse(lines);
    }
}
