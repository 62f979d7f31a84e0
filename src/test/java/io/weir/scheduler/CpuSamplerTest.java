package io.weir.scheduler;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * {@link CpuSampler}: each interval's CPU time is charged exactly once, reading the clock once per
 * interval; worker time adds the time requests were blocked, not the time they waited for a CPU.
 */
class CpuSamplerTest {

    private final AtomicLong cpu = new AtomicLong();
    private final AtomicLong reads = new AtomicLong();
    private final CpuClock clock = () -> {
        reads.incrementAndGet();
        return cpu.get();
    };

    @Test
    void requestsBetweenSamplesShareTheIntervalsCpuTimeAndTheClosingOneTakesTheRest() {
        CpuSampler s = new CpuSampler(clock, null, 1_000, 0);
        reads.set(0);
        // ten requests of 100 ns wall each; the thread burned 950 ns of CPU over the interval
        long charged = 0;
        for (int i = 0; i < 10; i++) {
            if (i == 9) {
                cpu.set(950);
            }
            charged += s.charge(i * 100L, (i + 1) * 100L);
        }
        assertThat(reads.get()).as("one clock read for the interval").isEqualTo(1);
        assertThat(charged).as("the interval's CPU time, charged once in total").isEqualTo(950);
        // the next interval's requests are charged at the measured ratio, 0.95
        assertThat(s.charge(1_000, 1_100)).isEqualTo(95);
    }

    @Test
    void anIntervalEstimatedAboveItsCpuTimeIsChargedTheEstimateNeverLess() {
        CpuSampler s = new CpuSampler(clock, null, 1_000, 0);
        long charged = 0;
        for (int i = 0; i < 10; i++) {
            if (i == 9) {
                cpu.set(600); // the thread was off the CPU for part of the interval
            }
            charged += s.charge(i * 100L, (i + 1) * 100L);
        }
        assertThat(charged).as("900 estimated at the previous ratio (1.0), then 0 for the closing request").isEqualTo(900);
        assertThat(s.charge(1_000, 1_100)).as("the next interval at the measured ratio, 0.6").isEqualTo(60);
    }

    /**
     * A worker that parks between requests: the ratio that estimates the next interval's
     * requests is CPU time per wall time of requests, not of the interval (which counts the parked
     * time). With the interval's wall, a busy request B (0.5 ms of CPU) closing each interval after
     * a 10 ms park set a ratio of about 0.05, at which B was charged a twentieth of its CPU and
     * the light request A, closing the next interval, took the rest.
     */
    @Test
    void theRatioBetweenSamplesIsTakenOverRequestsNotTheTimeTheWorkerParked() {
        CpuSampler s = new CpuSampler(clock, null, 1_000_000, 0);
        long now = 0;
        long burned = 0;
        long chargedB = 0;
        long chargedA = 0;
        for (int cycle = 0; cycle < 1000; cycle++) {
            burned += 500_000; // B: 0.5 ms wall, all of it on the CPU
            cpu.set(burned);
            chargedB += s.charge(now, now + 500_000);
            now += 500_000 + 10_000_000; // then the worker parks for 10 ms
            burned += 10_000; // A: 10 µs, all of it on the CPU
            cpu.set(burned);
            chargedA += s.charge(now, now + 10_000);
            now += 10_000;
        }
        assertThat((double) chargedB).as("B burned 500 ms").isCloseTo(500e6, org.assertj.core.data.Percentage.withPercentage(5));
        assertThat((double) chargedA).as("A burned 10 ms").isCloseTo(10e6, org.assertj.core.data.Percentage.withPercentage(5));
    }

    @Test
    void anIntervalOfZeroReadsTheClockForEveryRequest() {
        CpuSampler s = new CpuSampler(clock, null, 0, 0);
        reads.set(0);
        cpu.set(70);
        assertThat(s.charge(0, 100)).isEqualTo(70);
        cpu.set(120);
        assertThat(s.charge(100, 200)).isEqualTo(50);
        assertThat(reads.get()).isEqualTo(2);
    }

    private final AtomicLong delay = new AtomicLong();

    @Test
    void workerTimeIsTheCpuTimePlusTheTimeBlockedButNotTheTimeWaitingForACpu() {
        CpuSampler s = new CpuSampler(clock, delay::get, 1_000, 0);
        // one request of 1,000 ns wall: 100 ns on the CPU, 300 ns runnable but off it, 600 ns blocked
        cpu.set(100);
        delay.set(300);
        assertThat(s.charge(0, 1_000)).as("CPU time").isEqualTo(100);
        assertThat(s.work()).as("worker time: CPU and blocked").isEqualTo(700);
    }

    @Test
    void requestsBetweenSamplesShareTheIntervalsWorkerTimeByWallTime() {
        CpuSampler s = new CpuSampler(clock, delay::get, 1_000, 0);
        cpu.set(100);
        s.charge(0, 1_000); // ratio 0.1 CPU, worker time 1.0 of the requests' wall
        long work = 0;
        for (int i = 0; i < 4; i++) {
            s.charge(1_000 + i * 200L, 1_200 + i * 200L);
            work += s.work();
        }
        assertThat(work).as("estimated at the previous interval's worker/wall ratio").isEqualTo(800);
        cpu.set(200);
        delay.set(100); // the interval: 1,000 ns of requests, 100 on the CPU, 100 waiting for it
        s.charge(1_800, 2_000);
        assertThat(work + s.work()).as("the interval's worker time in total: 1,000 less 100 waiting").isEqualTo(900);
    }

    @Test
    void withoutARunDelayWorkerTimeIsTheCpuTime() {
        CpuSampler s = new CpuSampler(clock, null, 0, 0);
        cpu.set(70);
        assertThat(s.charge(0, 1_000)).isEqualTo(70);
        assertThat(s.work()).isEqualTo(70);
    }
}
