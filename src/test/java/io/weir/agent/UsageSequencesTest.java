package io.weir.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Usage report numbers are never reused by a restarted agent: the control plane would take a
 * reused (node, sequence) for a resend and drop the new report.
 */
class UsageSequencesTest {

    private static final Instant T = Instant.parse("2026-12-02T05:00:00Z");

    @TempDir
    Path dir;

    @Test
    void aRestartedAgentContinuesAboveEveryNumberItUsedEvenIfTheClockSteppedBack() throws Exception {
        UsageSequences first = UsageSequences.open(dir, Clock.fixed(T, ZoneOffset.UTC));
        long last = 0;
        for (int i = 0; i < UsageSequences.BLOCK + 5; i++) { // crosses a reservation
            long n = first.next();
            assertThat(n).isGreaterThan(last);
            last = n;
        }

        UsageSequences afterRestart = UsageSequences.open(dir, Clock.fixed(T.minusSeconds(86_400), ZoneOffset.UTC));

        assertThat(afterRestart.next()).isGreaterThan(last);
    }

    @Test
    void anAgentWhoseStateDirectoryWasWipedStartsAboveTheClockAndSoAboveItsEarlierNumbers() throws Exception {
        UsageSequences first = UsageSequences.open(dir.resolve("a"), Clock.fixed(T, ZoneOffset.UTC));
        long last = 0;
        for (int i = 0; i < 100; i++) { // 100 reports: at least 100 s at the shortest interval
            last = first.next();
        }

        UsageSequences wiped = UsageSequences.open(dir.resolve("b"), Clock.fixed(T.plusSeconds(100), ZoneOffset.UTC));

        assertThat(wiped.next()).isGreaterThan(last);
    }

    @Test
    void anUnreadableReservationFallsBackOnTheClockAndIsRewritten() throws Exception {
        Files.writeString(dir.resolve(UsageSequences.FILE_NAME), "not a number\n");
        Clock clock = Clock.fixed(T, ZoneOffset.UTC);

        UsageSequences s = UsageSequences.open(dir, clock);

        assertThat(s.next()).isEqualTo(T.toEpochMilli());
        assertThat(Long.parseLong(Files.readString(dir.resolve(UsageSequences.FILE_NAME)).strip()))
                .isGreaterThan(s.peek());
    }

    /** Bytes that are not text at all (a torn or foreign file) are unreadable too: they stopped the agent's start. */
    @Test
    void aReservationThatIsNotTextFallsBackOnTheClock() throws Exception {
        Files.write(dir.resolve(UsageSequences.FILE_NAME), new byte[] {(byte) 0xff, (byte) 0xfe, '\n'});
        Clock clock = Clock.fixed(T, ZoneOffset.UTC);

        UsageSequences s = UsageSequences.open(dir, clock);

        assertThat(s.next()).isEqualTo(T.toEpochMilli());
        assertThat(Long.parseLong(Files.readString(dir.resolve(UsageSequences.FILE_NAME)).strip()))
                .isGreaterThan(s.peek());
    }

    /**
     * A reservation that cannot be written at start (a full or read-only disk) is logged and the
     * numbering goes on above the stored number and the clock, as it does later: it stopped the
     * agent's start, and the data node, which then restarted in a loop and served nothing.
     */
    @Test
    void aReservationThatCannotBeWrittenAtStartDoesNotStopTheAgent() throws Exception {
        Files.writeString(dir.resolve(UsageSequences.FILE_NAME), (T.toEpochMilli() + 5000) + "\n");
        Files.createDirectories(dir.resolve(UsageSequences.FILE_NAME + ".tmp")); // the new reservation cannot be written
        Clock clock = Clock.fixed(T, ZoneOffset.UTC);

        UsageSequences s = UsageSequences.open(dir, clock);

        assertThat(s.next()).isEqualTo(T.toEpochMilli() + 5000);
        assertThat(s.next()).isEqualTo(T.toEpochMilli() + 5001);
    }
}
