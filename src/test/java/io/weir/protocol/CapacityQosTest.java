package io.weir.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.protocol.CapacityQos.Source;
import io.weir.protocol.CapacityQos.Term;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The formula of capacity-based QoS and its rules "at every capacity". */
class CapacityQosTest {

    private static final long GIB = CapacityQos.GIB;

    private static CapacityQos limit(Term max) {
        return new CapacityQos(100, Term.NONE, max, Term.NONE, Term.NONE, Term.NONE, null);
    }

    @Test
    void aRateTimesTheCapacityBoundedByItsFloorAndItsCap() {
        CapacityQos gp2 = limit(new Term(16_000L, 3.0, 100L)); // EBS gp2: 3 IOPS/GiB, at least 100, at most 16,000
        assertThat(gp2.resolve(10 * GIB).settings().maxIops()).isEqualTo(100);
        assertThat(gp2.resolve(10 * GIB).sources().get(1)).isEqualTo(Source.floor);
        assertThat(gp2.resolve(1000 * GIB).settings().maxIops()).isEqualTo(3000);
        assertThat(gp2.resolve(1000 * GIB).sources().get(1)).isEqualTo(Source.perGiB);
        assertThat(gp2.resolve(10_000 * GIB).settings().maxIops()).isEqualTo(16_000);
        assertThat(gp2.resolve(10_000 * GIB).sources().get(1)).isEqualTo(Source.cap);
        assertThat(limit(new Term(null, 50.0, null)).resolve(10 * GIB).settings().maxIops()).isEqualTo(500);
        assertThat(limit(new Term(null, 50.0, null)).resolve(GIB / 2 + 1).settings().maxIops()).isEqualTo(25);
        // no floor: never 0, which would mean unlimited
        assertThat(limit(new Term(null, 50.0, null)).resolve(0).settings().maxIops()).isEqualTo(1);
        assertThat(limit(Term.of(700L)).resolve(GIB).sources().get(1)).isEqualTo(Source.absolute);
        assertThat(limit(Term.NONE).resolve(GIB).sources().get(1)).isNull();
    }

    @Test
    void aFloorAboveItsCapOrWithoutItsRateIsRefused() {
        assertThat(limit(new Term(100L, 5.0, 200L)).violations()).extracting(QosSettings.Violation::field)
                .containsExactly("maxIopsFloor");
        assertThat(limit(new Term(100L, null, 20L)).violations()).extracting(QosSettings.Violation::field)
                .containsExactly("maxIopsFloor");
        assertThat(limit(new Term(100L, 5.0, 20L)).violations()).isEmpty();
    }

    @Test
    void aReservationPerGiBAboveTheLimitPerGiBIsRefused() {
        CapacityQos q = new CapacityQos(100, new Term(null, 20.0, null), new Term(null, 10.0, null), Term.NONE, Term.NONE,
                Term.NONE, null);
        assertThat(q.violations()).extracting(QosSettings.Violation::field).contains("minIopsPerGiB");
    }

    @Test
    void combinationsThatBreakTheRulesAtSomeCapacityAreRefused() {
        // an absolute reservation of 300 above a scaled limit below 6 GiB
        CapacityQos min = new CapacityQos(100, Term.of(300L), new Term(null, 50.0, 100L), Term.NONE, Term.NONE, Term.NONE,
                null);
        List<QosSettings.Violation> v = min.violations();
        assertThat(v).extracting(QosSettings.Violation::field).containsExactly("minIops");
        assertThat(v.get(0).message()).contains("at a capacity of");
        // a scaled burst that the cap of the limit overtakes, and one equal to it at capacity 0
        CapacityQos burst = new CapacityQos(100, Term.NONE, new Term(null, 10.0, 100L), new Term(null, 20.0, 100L),
                Term.NONE, Term.NONE, null);
        assertThat(burst.violations()).extracting(QosSettings.Violation::field).containsExactly("burstIopsPerGiB");
        CapacityQos fine = new CapacityQos(100, new Term(null, 5.0, 50L), new Term(null, 10.0, 100L),
                new Term(null, 20.0, 300L), Term.NONE, Term.NONE, null);
        assertThat(fine.violations()).isEmpty();
        // an absolute burst below a limit that grows without cap
        CapacityQos unbounded = new CapacityQos(100, Term.NONE, new Term(null, 10.0, 100L), Term.of(5000L), Term.NONE,
                Term.NONE, null);
        assertThat(unbounded.violations()).extracting(QosSettings.Violation::field).containsExactly("burstIops");
        // every number that validates resolves to settings the scheduler accepts, at any capacity
        for (long c : new long[] {0, 1, GIB, 5 * GIB, 123 * GIB, Long.MAX_VALUE}) {
            assertThat(fine.resolve(c).settings().isValid()).as("at %d bytes", c).isTrue();
        }
    }

    @Test
    void theHysteresisIsTheSmallerOfOneGiBAndFivePercent() {
        assertThat(CapacityQos.hysteresisBytes(10 * GIB)).isEqualTo(10 * GIB / 1000 * 50);
        assertThat(CapacityQos.hysteresisBytes(1000 * GIB)).isEqualTo(GIB);
        assertThat(CapacityQos.beyondHysteresis(0, 600L << 20, 10 * GIB)).isTrue();
        assertThat(CapacityQos.beyondHysteresis(0, 400L << 20, 10 * GIB)).isFalse();
    }
}
