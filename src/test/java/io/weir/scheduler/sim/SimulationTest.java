package io.weir.scheduler.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.scheduler.CostModel;
import io.weir.scheduler.SchedulerConfig;
import io.weir.scheduler.SchedulerConfig.TenantSpec;
import io.weir.scheduler.SchedulerConfig.VolumeSpec;
import java.util.List;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;

/** Scenario tests in virtual time: each runs the production scheduler in the simulator. */
class SimulationTest {

    private static final long SEC = 1_000_000_000L;
    private static final long MS = 1_000_000L;

    private static void assertWithinRelative(double actual, double ideal, double tolerance, String what) {
        assertThat(Math.abs(actual - ideal) / ideal).as("%s: actual %.5f vs ideal %.5f", what, actual, ideal)
                .isLessThanOrEqualTo(tolerance);
    }

    @Test
    void byteSharesOfWeights1248ComeWithin1PercentOfIdealWithMixedSizesFrom512BTo1MiB() {
        SimResult r = Simulator.scenario("weights", Policy::production, 7).measureFrom(SEC).run(10 * SEC);
        for (String v : List.of("w1", "w2", "w4", "w8")) {
            assertWithinRelative(r.byteShare(v), r.idealByteShare(v), 0.01, v);
        }
        assertThat(r.idealByteShare("w8")).isCloseTo(8.0 / 15, Offset.offset(1e-12));
    }

    @Test
    void tenantWeightsAreHonouredAboveVolumeWeights() {
        SimResult r = Simulator.scenario("tenants", Policy::production, 7).measureFrom(SEC).run(10 * SEC);
        assertWithinRelative(r.byteShare("b1"), 0.75, 0.01, "big tenant's only volume");
        for (String v : List.of("s1", "s2", "s3")) {
            assertWithinRelative(r.byteShare(v), 0.25 / 3, 0.01, v);
        }
    }

    @Test
    void fifoAndSfqReferencesRunBesideProductionAndMissTheHierarchy() {
        SimResult weir = Simulator.scenario("tenants", Policy::production, 7).measureFrom(SEC).run(5 * SEC);
        SimResult fifo = Simulator.scenario("tenants", Policy::fifo, 7).measureFrom(SEC).run(5 * SEC);
        SimResult sfq = Simulator.scenario("tenants", Policy::sfq, 7).measureFrom(SEC).run(5 * SEC);
        assertThat(weir.byteShare("b1")).isGreaterThan(0.74);
        assertThat(fifo.byteShare("b1")).isLessThan(0.3); // four equal closed loops: ~25% each
        assertThat(sfq.byteShare("b1")).isLessThan(0.3);  // flat SFQ ignores tenants
        assertThat(weir.report()).contains("b1").contains("ideal");
    }

    @Test
    void taskCpuShares70To20To10WithDifferentPerRequestCpuCostsComeWithin2Percent() {
        SimResult r = Simulator.scenario("tasks", Policy::production, 7).measureFrom(SEC).run(10 * SEC);
        assertWithinRelative(r.cpuShare("foreground"), 0.70, 0.02, "foreground");
        assertWithinRelative(r.cpuShare("gc"), 0.20, 0.02, "gc");
        assertWithinRelative(r.cpuShare("flush"), 0.10, 0.02, "flush");
    }

    @Test
    void idleTaskShareIsRedistributedInProportionToTheOthers() {
        SchedulerConfig c = SchedulerConfig.builder().task("foreground", 70).task("gc", 20).task("flush", 10)
                .tenant(TenantSpec.of("t")).volume(VolumeSpec.of("v", "t")).build();
        SimResult r = new Simulator(c, Policy::production, 2, 7)
                .add(Workload.closed("v", 16).cpu(20_000, 0))
                .add(Workload.background("gc", 4, 300_000))
                // flush has no work at all: its 10% goes to the others in proportion 70:20
                .measureFrom(SEC).run(10 * SEC);
        assertWithinRelative(r.cpuShare("foreground"), 70.0 / 90, 0.02, "foreground");
        assertWithinRelative(r.cpuShare("gc"), 20.0 / 90, 0.02, "gc");
        assertThat(r.cpuShare("flush")).isZero();
    }

    @Test
    void cappedVolumeStaysWithin2PercentOfItsCapWhileOthersUseTheRest() {
        SimResult r = Simulator.scenario("cap", Policy::production, 7).measureFrom(SEC).run(10 * SEC);
        assertWithinRelative(r.iops("capped"), 2_000, 0.02, "capped volume IOPS");
        // 20 us per request on one CPU: 50k IOPS of capacity; the other two split the rest equally
        double rest = 50_000 - r.iops("capped");
        assertWithinRelative(r.iops("a") + r.iops("b"), rest, 0.01, "work conservation");
        assertWithinRelative(r.iops("a"), r.iops("b"), 0.01, "a vs b");
    }

    @Test
    void cappedTenantStaysWithin2PercentOfItsAggregateCap() {
        SchedulerConfig c = SchedulerConfig.builder()
                .tenant(TenantSpec.of("capped").withWeight(10_000).withMaxBytesPerSec(100_000_000))
                .tenant(TenantSpec.of("other"))
                .volume(VolumeSpec.of("c1", "capped")).volume(VolumeSpec.of("c2", "capped"))
                .volume(VolumeSpec.of("o1", "other")).build();
        SimResult r = new Simulator(c, Policy::production, 1, 7)
                .add(Workload.closed("c1", 8).sizes(SizeMix.powersOfTwo(4096, 256 * 1024)).cpu(2_000, 0.01))
                .add(Workload.closed("c2", 8).sizes(SizeMix.powersOfTwo(4096, 256 * 1024)).cpu(2_000, 0.01))
                .add(Workload.closed("o1", 8).sizes(SizeMix.powersOfTwo(4096, 256 * 1024)).cpu(2_000, 0.01))
                .measureFrom(SEC).run(10 * SEC);
        assertWithinRelative(r.bytesPerSec("c1") + r.bytesPerSec("c2"), 100_000_000, 0.02, "tenant bytes/s");
        assertThat(r.bytesPerSec("o1")).isGreaterThan(100_000_000);
    }

    @Test
    void reservationIsMetWheneverItIsFeasible() {
        SimResult r = Simulator.scenario("reservation", Policy::production, 7).measureFrom(SEC).run(10 * SEC);
        // weight 1 against 2 x 5000 would give it 0.01% (~5 IOPS); it reserved 10k of 50k IOPS
        assertThat(r.iops("reserved")).isGreaterThanOrEqualTo(10_000 * 0.99);
        assertWithinRelative(r.iops("heavy1"), r.iops("heavy2"), 0.01, "heavy volumes share the rest");
        assertWithinRelative(r.iops("reserved") + r.iops("heavy1") + r.iops("heavy2"), 50_000, 0.01, "capacity");
        SimResult sfq = Simulator.scenario("reservation", Policy::sfq, 7).measureFrom(SEC).run(10 * SEC);
        assertThat(sfq.iops("reserved")).isLessThan(100);
    }

    @Test
    void reservationsExceedingCapacityAreServedInProportionToTheirMinimum() {
        // capacity 50k IOPS; reservations 40k + 20k + 15k = 75k: each gets min * 50/75
        SchedulerConfig c = SchedulerConfig.builder().tenant(TenantSpec.of("t"))
                .volume(VolumeSpec.of("r40", "t").withMinIops(40_000))
                .volume(VolumeSpec.of("r20", "t").withMinIops(20_000))
                .volume(VolumeSpec.of("r15", "t").withMinIops(15_000))
                .volume(VolumeSpec.of("none", "t").withWeight(10_000)).build();
        Simulator s = new Simulator(c, Policy::production, 1, 7);
        for (String v : List.of("r40", "r20", "r15", "none")) {
            s.add(Workload.closed(v, 16).cpu(20_000, 0));
        }
        SimResult r = s.measureFrom(2 * SEC).run(10 * SEC);
        assertWithinRelative(r.iops("r40"), 40_000 * 50.0 / 75, 0.02, "r40");
        assertWithinRelative(r.iops("r20"), 20_000 * 50.0 / 75, 0.02, "r20");
        assertWithinRelative(r.iops("r15"), 15_000 * 50.0 / 75, 0.02, "r15");
        assertThat(r.iops("none")).isLessThan(50);
    }

    @Test
    void idleFlowReturningAfter10sGetsNoMoreThanItsBound() {
        SchedulerConfig c = SchedulerConfig.builder().tenant(TenantSpec.of("t"))
                .volume(VolumeSpec.of("steady", "t").withWeight(100))
                .volume(VolumeSpec.of("sleeper", "t").withWeight(300)).build();
        SizeMix sizes = SizeMix.powersOfTwo(512, 1 << 20);
        long[] wSteady = new long[1];
        long[] wSleeper = new long[1];
        long[] lmax = new long[2];
        long[] worst = {Long.MIN_VALUE};
        long returnAt = 11 * SEC;
        Simulator sim = new Simulator(c, Policy::production, 1, 7)
                .add(Workload.closed("steady", 16).sizes(sizes).cpu(5_000, 0.05))
                .add(Workload.closed("sleeper", 16).sizes(sizes).cpu(5_000, 0.05).onOff(SEC, 10 * SEC));
        sim.onDispatch(req -> {
            if (req.dispatchNanos < returnAt) {
                return;
            }
            long cost = Math.max(req.bytes, CostModel.DEFAULT_MIN_CHARGE_BYTES);
            if (req.target.equals("steady")) {
                wSteady[0] += cost;
                lmax[0] = Math.max(lmax[0], cost);
            } else {
                wSleeper[0] += cost;
                lmax[1] = Math.max(lmax[1], cost);
            }
            // W_sleeper/300 - W_steady/100, cross-multiplied by 300*100
            worst[0] = Math.max(worst[0], wSleeper[0] * 100 - wSteady[0] * 300);
        });
        sim.run(11 * SEC + 500 * MS);
        assertThat(wSleeper[0]).as("the sleeper is served again after its return").isPositive();
        // bound: Lmax_sleeper/w_sleeper + Lmax_steady/w_steady, cross-multiplied; the largest cost is 1 MiB
        long bound = lmax[1] * 100 + lmax[0] * 300;
        assertThat(worst[0]).isLessThanOrEqualTo(bound);
        // and it is not starved either: over the 0.5 s it gets its 3/4 of the bytes within a few requests
        double share = (double) wSleeper[0] / (wSleeper[0] + wSteady[0]);
        assertThat(share).isCloseTo(0.75, Offset.offset(0.02));
    }

    @Test
    void simulationIsDeterministicForAGivenSeed() {
        String a = Simulator.scenario("weights", Policy::production, 99).measureFrom(SEC).run(2 * SEC).report();
        String b = Simulator.scenario("weights", Policy::production, 99).measureFrom(SEC).run(2 * SEC).report();
        assertThat(a).isEqualTo(b);
    }

    @Test
    void openLoopOnOffFlowAndReconfigurationRunThroughTheSimulator() {
        SchedulerConfig c1 = SchedulerConfig.builder().tenant(TenantSpec.of("t"))
                .volume(VolumeSpec.of("a", "t")).volume(VolumeSpec.of("b", "t")).build();
        SchedulerConfig c2 = c1.toBuilder().volume(VolumeSpec.of("a", "t").withMaxIops(1_000)).build();
        SimResult r = new Simulator(c1, Policy::production, 1, 3)
                .add(Workload.open("a", 30_000).withPoissonArrivals())
                .add(Workload.closed("b", 4).onOff(100 * MS, 100 * MS))
                .reconfigureAt(2 * SEC, c2)
                .measureFrom(3 * SEC).run(5 * SEC);
        assertWithinRelative(r.iops("a"), 1_000, 0.02, "a capped after reconfiguration");
        assertThat(r.target("a").rejected).isPositive(); // its bounded queue overflowed, visibly
        assertThat(r.iops("b")).isGreaterThan(10_000);
    }
}
