package io.erda.fabric.emulated;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

class IntKeyMapTest {
    /**
     * Random puts, replaces, removes, batches of puts and removals by value over a small key range (so keys collide and
     * come back): like a HashMap.
     */
    @Test
    void behavesLikeAHashMap() {
        IntKeyMap<String> map = new IntKeyMap<>();
        Map<Integer, String> model = new HashMap<>();
        SplittableRandom random = new SplittableRandom(7);
        for (int i = 0; i < 20_000; i++) {
            int key = random.nextInt(-64, 64) * 0x1000; // negative, zero, and many sharing low bits
            int op = random.nextInt(8);
            if (op < 2) {
                assertThat(map.remove(key)).as("remove %d", key).isEqualTo(model.remove(key));
            } else if (op == 2) { // several at once, a key among them possibly twice: the last one wins
                List<String> batch = new ArrayList<>();
                for (int b = random.nextInt(0, 6); b > 0; b--) {
                    String value = random.nextInt(-64, 64) * 0x1000 + ":" + i + "." + b;
                    batch.add(value);
                    model.put(keyOf(value), value);
                }
                map.putAll(batch, IntKeyMapTest::keyOf);
            } else if (op == 3) {
                int parity = random.nextInt(2);
                Predicate<String> odd = v -> (v.hashCode() & 1) == parity;
                List<String> expected = model.values().stream().filter(odd).toList();
                model.values().removeIf(odd);
                assertThat(map.removeIf(odd)).as("removeIf").containsExactlyInAnyOrderElementsOf(expected);
            } else {
                String value = key + ":" + i;
                assertThat(map.put(key, value)).as("put %d", key).isEqualTo(model.put(key, value));
            }
            int probe = random.nextInt(-64, 64) * 0x1000;
            assertThat(map.get(probe)).as("get %d", probe).isEqualTo(model.get(probe));
            assertThat(map.size()).isEqualTo(model.size());
        }
        assertThat(map.values()).containsExactlyInAnyOrderElementsOf(model.values());
    }

    private static int keyOf(String value) {
        return Integer.parseInt(value.substring(0, value.indexOf(':')));
    }

    @Test
    void anEmptyMapHasNothingAndNullValuesAreRefused() {
        IntKeyMap<String> map = new IntKeyMap<>();
        assertThat(map.get(0)).isNull();
        assertThat(map.remove(5)).isNull();
        assertThat(map.values()).isEmpty();
        assertThatThrownBy(() -> map.put(3, null)).isInstanceOf(NullPointerException.class).hasMessageContaining("3");
    }

    /**
     * Readers that never lock, while a writer keeps adding and removing keys: a key is either absent or maps to its
     * own value, and a key never removed is always found.
     */
    @Test
    void lockFreeReadersSeeWholeTablesOnly() throws Exception {
        IntKeyMap<Integer> map = new IntKeyMap<>();
        for (int k = 0; k < 8; k++) {
            map.put(k, k); // never removed
        }
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<String> wrong = new AtomicReference<>();
        AtomicLong reads = new AtomicLong();
        Thread reader = Thread.ofPlatform().start(() -> {
            SplittableRandom random = new SplittableRandom(1);
            while (!stop.get() && wrong.get() == null) {
                int k = random.nextInt(0, 512);
                Integer v = map.get(k);
                if (k < 8 ? v == null || v != k : v != null && v != k) {
                    wrong.set("key " + k + " read " + v);
                }
                reads.incrementAndGet();
            }
        });
        SplittableRandom random = new SplittableRandom(2);
        for (int i = 0; i < 50_000 && wrong.get() == null; i++) {
            int k = random.nextInt(8, 512);
            if (random.nextBoolean()) {
                map.put(k, k);
            } else {
                map.remove(k);
            }
        }
        stop.set(true);
        reader.join();
        assertThat(wrong.get()).isNull();
        assertThat(reads.get()).isPositive();
    }
}
