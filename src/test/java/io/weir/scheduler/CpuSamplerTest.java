package io.weir.scheduler;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** {@link CpuSampler}: each interval's CPU time is charged exactly once, reading the clock once per interval. */
class CpuSamplerTest {

    private final AtomicLong cpu = new AtomicLong();
    private final AtomicLong reads = new AtomicLong();
    private final CpuClock clock = () -> {
        reads.incrementAndGet();
        return cpu.get();
    };

    @Test
    void requestsBetweenSamplesShareTheIntervalsCpuTimeAndTheClosingOneTakesTheRest() {
        CpuSampler s = new CpuSampler(clock, 1_000, 0);
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
        CpuSampler s = new CpuSampler(clock, 1_000, 0);
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

    @Test
    void anIntervalOfZeroReadsTheClockForEveryRequest() {
        CpuSampler s = new CpuSampler(clock, 0, 0);
        reads.set(0);
        cpu.set(70);
        assertThat(s.charge(0, 100)).isEqualTo(70);
        cpu.set(120);
        assertThat(s.charge(100, 200)).isEqualTo(50);
        assertThat(reads.get()).isEqualTo(2);
    }
}
