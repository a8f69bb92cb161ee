package io.erda.server.platform;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The mounts of this process ({@code /proc/self/mountinfo}): which file system a directory is on, with its options. */
final class Mounts {
    private Mounts() {}

    /** One mount: mount point, file system type and super-block options ({@code huge=within_size,size=...}). */
    record Mount(Path point, String type, List<String> options) {
        /** The value of option {@code name} ({@code huge} gives {@code within_size}), or {@code absent}. */
        String option(String name, String absent) {
            for (String o : options) {
                if (o.startsWith(name + "=")) {
                    return o.substring(name.length() + 1);
                }
            }
            return absent;
        }
    }

    static List<Mount> read() {
        try {
            return parse(Files.readAllLines(Path.of("/proc/self/mountinfo")));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read /proc/self/mountinfo", e);
        }
    }

    /**
     * Parses mountinfo lines: {@code id parent major:minor root mount-point options [optional fields] - type source
     * super-options}; mount points escape space, tab, newline and backslash as octal ({@code \040}).
     */
    static List<Mount> parse(List<String> lines) {
        List<Mount> mounts = new ArrayList<>();
        for (String line : lines) {
            String[] f = line.split(" ");
            int dash = List.of(f).indexOf("-");
            if (f.length < 5 || dash < 0 || dash + 3 >= f.length) {
                continue;
            }
            mounts.add(new Mount(Path.of(unescape(f[4])), f[dash + 1], List.of(f[dash + 3].split(","))));
        }
        return mounts;
    }

    /** The mount holding {@code path} (absolute, symbolic links resolved): the last mounted of the longest prefix. */
    static Mount containing(List<Mount> mounts, Path path) {
        Mount best = null;
        for (Mount m : mounts) {
            if (path.startsWith(m.point()) && (best == null || m.point().getNameCount() >= best.point().getNameCount())) {
                best = m;
            }
        }
        return best;
    }

    private static String unescape(String s) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && i + 3 < s.length() && s.substring(i + 1, i + 4).matches("[0-7]{3}")) {
                b.append((char) Integer.parseInt(s.substring(i + 1, i + 4), 8));
                i += 3;
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }
}
