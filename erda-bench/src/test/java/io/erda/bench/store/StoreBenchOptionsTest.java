package io.erda.bench.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** store-bench's answers to bad values, before it makes any store. */
class StoreBenchOptionsTest {

    @Test
    void anUnknownProtocolIsOneLineNamingEveryRowNotATrace() {
        CommandLine cli = StoreBench.commandLine();
        StringWriter err = new StringWriter();
        cli.setErr(new PrintWriter(err));
        int status = cli.execute("--protocols", "erda,one-sided", "--fabrics", "shm");
        assertThat(status).isEqualTo(2);
        assertThat(err.toString().strip())
                .startsWith("store-bench: protocol 'one-sided' is not one of store-bench's rows: [")
                .contains("erda-one-sided", "rdmp-cc", "redo-log").doesNotContain("\tat ").hasLineCount(1);
    }
}
