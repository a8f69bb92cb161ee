package io.erda.ffm.verbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.erda.ffm.rdmacm.RdmaCma;
import java.io.IOException;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Compiles src/main/c/verbs_layouts.c against the installed rdma-core headers and checks every size,
 * offset and constant it prints against the committed generated classes (Verbs, RdmaCma), both ways:
 * nothing the headers say may differ, and nothing in the Java classes may be unchecked.
 */
class LayoutConformanceTest {
    private static final String INSTALL = "install them: apt-get install -y libibverbs-dev librdmacm-dev gcc";
    private static final Path INCLUDE = Path.of("/usr/include");
    private static final List<Class<?>> GENERATED = List.of(Verbs.class, RdmaCma.class);

    @TempDir
    static Path work;
    static List<String[]> lines;

    @BeforeAll
    static void runOffsetProgram() throws Exception {
        for (String header : List.of("infiniband/verbs.h", "rdma/rdma_cma.h")) {
            if (!Files.isRegularFile(INCLUDE.resolve(header))) {
                fail("header " + INCLUDE.resolve(header) + " is missing; " + INSTALL);
            }
        }
        Path source = Path.of("src/main/c/verbs_layouts.c").toAbsolutePath();
        assertThat(source).as("offset program source").exists();
        Path binary = work.resolve("verbs_layouts");
        List<String> gcc = new ArrayList<>(List.of("gcc", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-o",
                binary.toString(), source.toString()));
        // Same rule as scripts/gen-verbs-layouts.sh: FLUSH is an enum, so the header text decides.
        if (Files.readString(INCLUDE.resolve("infiniband/verbs.h")).contains("wr_flush")) {
            gcc.add("-DERDA_HAVE_WR_FLUSH=1");
        }
        run(gcc, "gcc could not compile " + source + "; " + INSTALL);
        String out = run(List.of(binary.toString(), "--check"), "verbs_layouts --check failed");
        lines = out.lines().map(l -> l.split(" ")).toList();
        assertThat(lines).as("check lines").hasSizeGreaterThan(100);
    }

    private static String run(List<String> command, String whatFailed) throws InterruptedException {
        Process p;
        try {
            p = new ProcessBuilder(command).redirectErrorStream(true).start();
        } catch (IOException e) {
            return fail(whatFailed + ": cannot run " + command.getFirst() + " (" + e.getMessage() + ")");
        }
        String output;
        try {
            output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return fail(whatFailed + ": " + e.getMessage());
        }
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            fail(whatFailed + ":\n" + output);
        }
        return output;
    }

    private static Map<String, Object> generatedFields() throws IllegalAccessException {
        Map<String, Object> fields = new LinkedHashMap<>();
        for (Class<?> c : GENERATED) {
            for (Field f : c.getDeclaredFields()) {
                if (Modifier.isPublic(f.getModifiers()) && Modifier.isStatic(f.getModifiers())) {
                    if (fields.put(f.getName(), f.get(null)) != null) {
                        fail("both generated classes define " + f.getName());
                    }
                }
            }
        }
        return fields;
    }

    @Test
    void everySizeOffsetAndConstantMatchesTheInstalledHeaders() throws Exception {
        Map<String, Object> fields = generatedFields();
        Set<String> checked = new HashSet<>();
        List<String> drift = new ArrayList<>();
        for (String[] line : lines) {
            String kind = line[0];
            String name = line[1];
            long expected = Long.parseLong(line[2]);
            switch (kind) {
                case "size" -> {
                    checked.add(name);
                    if (!(fields.get(name) instanceof StructLayout layout)) {
                        drift.add("no layout " + name);
                    } else if (layout.byteSize() != expected) {
                        drift.add("sizeof(" + name + ") is " + expected + ", layout says " + layout.byteSize());
                    }
                }
                case "offset" -> {
                    String[] path = name.split("\\.");
                    String javaName = String.join("$", path);
                    checked.add(javaName);
                    checked.add(javaName + "$OFFSET");
                    Object constant = fields.get(javaName + "$OFFSET");
                    if (!(constant instanceof Long offset) || offset != expected) {
                        drift.add("offsetof(" + name + ") is " + expected + ", " + javaName + "$OFFSET is " + constant);
                    }
                    if (fields.get(path[0]) instanceof StructLayout layout) {
                        MemoryLayout.PathElement[] elements = Arrays.stream(path, 1, path.length)
                                .map(MemoryLayout.PathElement::groupElement).toArray(MemoryLayout.PathElement[]::new);
                        long inLayout = layout.byteOffset(elements);
                        if (inLayout != expected) {
                            drift.add("offsetof(" + name + ") is " + expected + ", layout " + path[0] + " says " + inLayout);
                        }
                    }
                }
                case "const" -> {
                    checked.add(name);
                    Object constant = fields.get(name);
                    if (!(constant instanceof Number n) || n.longValue() != expected) {
                        drift.add(name + " is " + expected + " in the headers, " + constant + " in the bindings");
                    }
                }
                default -> drift.add("unknown check line " + String.join(" ", line));
            }
        }
        assertThat(drift).as("drift between installed headers and committed bindings;"
                + " regenerate with scripts/gen-verbs-layouts.sh").isEmpty();
        Set<String> unchecked = new HashSet<>(fields.keySet());
        unchecked.removeAll(checked);
        assertThat(unchecked).as("generated fields the offset program no longer vouches for").isEmpty();
    }

    @Test
    void dataPathOpsSitWhereTheAbiPromises() {
        // ABI-stable since rdma-core v13 on x86_64; a change here breaks every compiled verbs program.
        assertThat(Verbs.ibv_context$ops$post_send$OFFSET).isEqualTo(208);
        assertThat(Verbs.ibv_context$ops$post_recv$OFFSET).isEqualTo(216);
        assertThat(Verbs.ibv_context$ops$poll_cq$OFFSET).isEqualTo(96);
    }
}
