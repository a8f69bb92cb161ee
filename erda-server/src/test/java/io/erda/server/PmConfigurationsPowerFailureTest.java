package io.erda.server;

import static io.erda.server.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import io.erda.core.pm.PowerFailure;
import io.erda.core.testing.ShmTempDirFactory;
import io.erda.protocol.PersistenceMethod;
import io.erda.protocol.PmConfiguration;
import io.erda.protocol.PutReply;
import io.erda.protocol.StoreInfo;
import io.erda.protocol.WireStatus;
import io.erda.server.platform.PmEmulation;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The store's three persistence methods as three cells of the taxonomy's table (docs/persistence.md, "The store's
 * emulation"): for each of the 12 server configurations, a real server over real mapped files runs with
 * power-failure emulation of that configuration; a client PUTs keys, each acknowledged after the method's own step
 * (wsp: the WRITE's completion; read-after-write: a one-sided FLUSH; server-flush: a FLUSH request); the server stops
 * as if the power failed, the store collapses dropping every line not durable, and a restarted server is asked for
 * every acknowledged PUT. Where {@link PersistenceMethod#correctIn} (the taxonomy's verdict, checked equal in
 * erda-remotelog's TaxonomyTest) says the method is enough, none is lost; where it says not, losses are shown.
 */
class PmConfigurationsPowerFailureTest {
    private static final int KEYS = 24;

    @org.junit.jupiter.api.io.TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private RequestServer server;

    static Stream<Arguments> configurations() {
        return PowerFailureEmulationTest.schemes()
                .flatMap(scheme -> PmConfiguration.all().stream().map(c -> Arguments.of(scheme, c)));
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    private RawClient start(Path base, String scheme, PersistenceMethod method, PmConfiguration configuration) {
        server = RequestServer.start(TestStores.config(base, scheme, Duration.ofSeconds(30)).withPersistence(method)
                .withPmEmulation(PmEmulation.POWER_FAILURE.withConfiguration(configuration)));
        return RawClient.connect(server.uri());
    }

    /** PUTs {@code KEYS} keys, each acknowledged as {@code method} prescribes; returns their values. */
    private static List<String> acknowledgedPuts(RawClient client, PersistenceMethod method) {
        List<String> values = new ArrayList<>();
        for (int i = 0; i < KEYS; i++) {
            String value = "acknowledged-" + i + "-" + "v".repeat(i);
            PutReply where = client.putAndWrite(bytes("k" + i), bytes(value));
            switch (method) {
                case WSP -> { }
                case READ_AFTER_WRITE -> client.fence(where);
                case SERVER_FLUSH -> assertThat(client.flush(where.head(), where.chainOffset(), where.objectLength())
                        .status()).isEqualTo(WireStatus.OK);
            }
            values.add(value);
        }
        return values;
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("configurations")
    void eachMethodLosesAcknowledgedPutsExactlyWhereTheTaxonomySaysItIsNotEnough(String scheme,
                                                                                PmConfiguration configuration) {
        StringBuilder cells = new StringBuilder();
        for (PersistenceMethod method : PersistenceMethod.values()) {
            Path base = dir.resolve(method.option());
            RawClient client = start(base, scheme, method, configuration);
            StoreInfo info = client.hello();
            assertThat(info.configuration()).isEqualTo(configuration);
            assertThat(info.persistence()).isEqualTo(method);
            assertThat(client.stats()).contains("pm_configuration=" + configuration.code() + "\n");
            List<String> values = acknowledgedPuts(client, method);
            client.close();
            server.close();
            server = null;
            PowerFailure.Report collapse = PowerFailure.collapse(base.resolve("store"), 7, PowerFailure.Policy.DROP);

            client = start(base, scheme, method, configuration);
            int lost = 0;
            for (int i = 0; i < KEYS; i++) {
                if (!values.get(i).equals(client.getString(bytes("k" + i)))) {
                    lost++;
                }
            }
            client.close();
            server.close();
            server = null;
            boolean correct = method.correctIn(configuration);
            cells.append(String.format("%s %-20s %-17s %-9s lost %2d of %d (%s)%n", scheme, configuration,
                    method.option(), correct ? "correct" : "incorrect", lost, KEYS, collapse.lines() + " lines dropped"));
            if (correct) {
                assertThat(lost).as("%s in %s: %s\n%s", method.option(), configuration, method.reasonIn(configuration),
                        collapse).isZero();
            } else {
                assertThat(lost).as("%s in %s: %s\n%s", method.option(), configuration, method.reasonIn(configuration),
                        collapse).isPositive();
            }
        }
        System.out.print(cells);
    }
}
