package io.erda.server.store;

import io.erda.protocol.memory.Key;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The pending reservations: per key in order (one record, or several), all in deadline order, over every shard. */
class ReservationsTest {
    private static final java.util.function.Predicate<Reservation> NONE_COMPLETE = r -> false;
    private static Key key(String k) {
        return Key.copyOf(MemorySegment.ofArray(k.getBytes(StandardCharsets.UTF_8)));
    }

    private static Reservation record(Key key, long offset, long deadline) {
        return new Reservation(key, 0, offset, 64, deadline, offset - 64);
    }

    @Test
    void aKeysRecordsStayInReservationOrderWhetherOneOrSeveral() {
        Reservations reservations = new Reservations();
        Key k = key("k");
        Reservation first = record(k, 64, 1);
        reservations.add(first, NONE_COMPLETE);
        assertThat(reservations.of(k)).containsExactly(first);
        assertThat(reservations.newest(k)).isSameAs(first);

        Reservation second = record(k, 128, 2);
        Reservation third = record(k, 192, 3);
        reservations.add(second, NONE_COMPLETE);
        reservations.add(third, NONE_COMPLETE);

        assertThat(reservations.of(k)).containsExactly(first, second, third);
        assertThat(reservations.newest(k)).isSameAs(third);
        assertThat(everyKey(reservations)).singleElement().satisfies(r -> assertThat(r).containsExactly(first, second, third));
        assertThat(reservations.keys()).isEqualTo(1);
        // the deadline queue hands out every record; only the key's newest is the one to settle
        assertThat(reservations.pollEarliest()).isNull();
        assertThat(reservations.pollEarliest()).isNull();
        assertThat(reservations.pollEarliest()).isSameAs(third);
        reservations.drop(k);
        assertThat(reservations.of(k)).isEmpty();
        assertThat(reservations.newest(k)).isNull();
        assertThat(reservations.keys()).isZero();
        assertThat(reservations.earliest()).isNull();
    }

    @Test
    void atPruneAtRecordsThoseOlderThanTheNewestCompleteOneAreDroppedAndItStays() {
        Reservations reservations = new Reservations();
        Key k = key("hot");
        List<Reservation> records = new ArrayList<>();
        for (int i = 1; i <= Reservations.PRUNE_AT; i++) {
            records.add(record(k, 64L * i, i));
        }
        Reservation complete = records.get(Reservations.PRUNE_AT - 3); // the second newest before the last one added
        List<Reservation> asked = new ArrayList<>();
        for (Reservation r : records) {
            reservations.add(r, candidate -> {
                asked.add(candidate);
                return candidate == complete;
            });
        }
        assertThat(asked).as("only the two newest before the new one are checked, newest first")
                .containsExactly(records.get(Reservations.PRUNE_AT - 2), complete);
        assertThat(reservations.of(k)).containsExactlyElementsOf(records.subList(Reservations.PRUNE_AT - 3, Reservations.PRUNE_AT));
        // the dropped records' deadlines still come up, as records that are not their key's newest
        for (int i = 0; i < Reservations.PRUNE_AT - 1; i++) {
            assertThat(reservations.pollEarliest()).isNull();
        }
        assertThat(reservations.pollEarliest()).isSameAs(records.getLast());
    }

    @Test
    void manyKeysOverAllShardsAreEachFoundAndSettledInDeadlineOrder() {
        Reservations reservations = new Reservations();
        int n = 50_000;
        List<Key> keys = new ArrayList<>();
        Set<Integer> shards = new HashSet<>();
        for (int i = 0; i < n; i++) {
            Key k = key("user" + i);
            keys.add(k);
            shards.add((int) (k.hash() >>> 58));
            reservations.add(record(k, 64L * (i + 1), i), NONE_COMPLETE);
        }
        assertThat(shards).as("the keys spread over every shard").hasSize(Reservations.SHARDS);
        assertThat(reservations.keys()).isEqualTo(n);
        assertThat(everyKey(reservations)).hasSize(n);
        for (int i = 0; i < n; i++) {
            assertThat(reservations.newest(keys.get(i)).chainOffset()).isEqualTo(64L * (i + 1));
        }
        for (int i = 0; i < n; i++) {
            Reservation due = reservations.pollEarliest();
            assertThat(due.deadline()).isEqualTo(i);
            reservations.drop(due.key());
        }
        assertThat(reservations.keys()).isZero();
    }

    /**
     * A record's own bit says what a lookup of its key says, whatever happened since it was added: a newer record,
     * a prune, a drop, a new record after a drop; the deadline queue hands out exactly the records the bit calls
     * newest.
     */
    @Test
    void aRecordKnowsWhetherItIsStillItsKeysNewest() {
        Reservations reservations = new Reservations();
        java.util.Random random = new java.util.Random(7);
        List<Key> keys = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            keys.add(key("k" + i));
        }
        List<Reservation> added = new ArrayList<>();
        long deadline = 0;
        int polled = 0;
        for (int step = 0; step < 20_000; step++) {
            Key k = keys.get(random.nextInt(keys.size()));
            int op = random.nextInt(10);
            if (op < 6) {
                Reservation r = record(k, 64L * (step + 1), deadline++);
                reservations.add(r, candidate -> random.nextInt(4) == 0); // prunes now and then
                added.add(r);
            } else if (op < 8) {
                reservations.drop(k);
            } else if (polled < added.size()) {
                Reservation due = added.get(polled++);
                assertThat(reservations.earliest()).isSameAs(due);
                boolean newest = reservations.newest(due.key()) == due;
                assertThat(reservations.pollEarliest()).isSameAs(newest ? due : null);
            }
            if (step % 100 == 0 || step > 19_900) {
                for (Reservation r : added) {
                    assertThat(r.isNewest()).as("record %s", r).isEqualTo(reservations.newest(r.key()) == r);
                }
            }
        }
    }

    /** The shards outgrow their tables at different pending counts: thresholds at 1024 buckets all differ. */
    @Test
    void theShardsGrowEachAtItsOwnCount() {
        Set<Integer> thresholds = new HashSet<>();
        for (int shard = 0; shard < Reservations.SHARDS; shard++) {
            float f = Reservations.loadFactor(shard);
            assertThat(f).isGreaterThan(0.5f).isLessThanOrEqualTo(1.0f);
            thresholds.add((int) (1024 * f));
        }
        assertThat(thresholds).hasSize(Reservations.SHARDS);
    }

    /** Each key's records, oldest first, as {@link Reservations#anyKeyIn} visits them shard by shard. */
    private static List<List<Reservation>> everyKey(Reservations reservations) {
        List<List<Reservation>> all = new ArrayList<>();
        for (int shard = 0; shard < Reservations.SHARDS; shard++) {
            assertThat(reservations.anyKeyIn(shard, records -> {
                all.add(List.copyOf(records));
                return false;
            })).isFalse();
        }
        return all;
    }
}
