package io.weir.datanode;

import static io.weir.datanode.ReplicaCopy.REGION_BYTES;
import static io.weir.datanode.ReplicaCopy.STEP_BYTES;
import static org.assertj.core.api.Assertions.assertThat;

import io.weir.datanode.ReplicaCopy.State;
import io.weir.datanode.ReplicaCopy.Step;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** A copy's dirty map as its primary keeps it: what a resync step takes, and what it gives back. */
class ReplicaCopyTest {
    static final long SIZE = 64L * REGION_BYTES + 4096; // the last region is short

    /** Resyncing: steps are taken of a copy in sync or resyncing, never of one out. */
    final ReplicaCopy copy = new ReplicaCopy(UUID.randomUUID(), "127.0.0.1:1", State.RESYNCING);

    @Test
    void aWriteDirtiesEveryRegionItTouches() {
        copy.markDirty(REGION_BYTES - 1, 2);
        assertThat(copy.remainingBytes(SIZE)).isEqualTo(2L * REGION_BYTES);
        copy.markDirty(5L * REGION_BYTES, 0);
        assertThat(copy.remainingBytes(SIZE)).as("an empty range dirties nothing").isEqualTo(2L * REGION_BYTES);
    }

    /** The primary's own FLUSH is due once the oldest write the copy holds unforced is old enough. */
    @Test
    void aFlushIsDueOnceTheOldestUnforcedWriteIsOldEnough() {
        long every = 5_000_000_000L;
        assertThat(copy.flushDue(System.nanoTime() + every, every)).as("nothing unforced").isFalse();
        long before = System.nanoTime();
        copy.written(0, 4096);
        long after = System.nanoTime();
        copy.written(REGION_BYTES, 4096); // a later write does not make the oldest younger
        assertThat(copy.flushDue(before + every - 1, every)).as("younger than every").isFalse();
        assertThat(copy.flushDue(after + every, every)).isTrue();
        copy.flushSent();
        assertThat(copy.flushDue(after + every, every)).as("covered by a FLUSH sent").isFalse();
        copy.written(0, 4096);
        copy.leave();
        assertThat(copy.flushDue(Long.MAX_VALUE, every)).as("out: its unforced writes are dirty").isFalse();
    }

    @Test
    void aStepTakesConsecutiveDirtyRegionsUpToItsSizeAndTheLastRegionIsCutAtTheEnd() {
        copy.markAllDirty(SIZE);
        copy.startResync();
        long copied = 0;
        Step s;
        while ((s = copy.takeStep(SIZE, 7)) != null) {
            assertThat(s.length()).isLessThanOrEqualTo(STEP_BYTES);
            assertThat(s.offset()).isEqualTo(copied);
            assertThat(s.epoch()).isEqualTo(7);
            copied += s.length();
            copy.stepAnswered(s, true);
        }
        assertThat(copied).isEqualTo(SIZE);
        assertThat(copy.nothingLeft()).isTrue();
        assertThat(copy.resyncBytes).isEqualTo(SIZE);
        assertThat(copy.steps()).isZero();
    }

    @Test
    void aRegionOnItsWayIsNotTakenAgainAndAWriteIntoItIsSeen() {
        copy.markDirty(0, 2L * REGION_BYTES);
        Step first = copy.takeStep(SIZE, 1);
        assertThat(first.regions()).isEqualTo(2);
        assertThat(copy.onTheWay(REGION_BYTES + 10, 1)).isTrue();
        assertThat(copy.onTheWay(2L * REGION_BYTES, REGION_BYTES)).isFalse();
        copy.markDirty(0, 1); // dirty again while on its way (a request the copy failed, say)
        assertThat(copy.takeStep(SIZE, 1)).as("its region is still on its way").isNull();
        copy.stepAnswered(first, true);
        Step again = copy.takeStep(SIZE, 1);
        assertThat(again.offset()).isZero();
        assertThat(again.regions()).isEqualTo(1);
    }

    /**
     * A client write waits only for the steps over its range taken before it came (rule 4 of
     * {@link ReplicatedVolume}): a step taken later read the region after the write.
     */
    @Test
    void aStepTakenAfterAWriteCameIsNotOnItsWayForThatWrite() {
        copy.markDirty(0, REGION_BYTES);
        Step first = copy.takeStep(SIZE, 1);
        long cameAfter = copy.stepsTaken(); // a write into the first region comes now
        assertThat(copy.onTheWay(10, 4096, cameAfter)).isTrue();
        assertThat(copy.onTheWay(REGION_BYTES, 4096, cameAfter)).as("a region no step covers").isFalse();
        copy.stepAnswered(first, true);
        copy.markDirty(0, REGION_BYTES);
        copy.takeStep(SIZE, 1);
        assertThat(copy.onTheWay(10, 4096)).isTrue();
        assertThat(copy.onTheWay(10, 4096, cameAfter)).as("the step on its way now was taken after the write").isFalse();
        assertThat(copy.onTheWay(10, 4096, copy.stepsTaken())).as("for a write that comes now").isTrue();
    }

    @Test
    void aFailedStepLeavesItsRegionsDirty() {
        copy.markDirty(3L * REGION_BYTES, REGION_BYTES);
        Step s = copy.takeStep(SIZE, 1);
        copy.stepAnswered(s, false);
        assertThat(copy.remainingBytes(SIZE)).isEqualTo(REGION_BYTES);
        assertThat(copy.resyncBytes).isZero();
        assertThat(copy.takeStep(SIZE, 1).offset()).isEqualTo(3L * REGION_BYTES);
    }

    @Test
    void aStepSweepsOnFromWhereTheLastEndedThenWrapsAround() {
        copy.markDirty(10L * REGION_BYTES, REGION_BYTES);
        copy.stepAnswered(copy.takeStep(SIZE, 1), true);
        copy.markDirty(0, REGION_BYTES);
        copy.markDirty(20L * REGION_BYTES, REGION_BYTES);
        assertThat(copy.takeStep(SIZE, 1).offset()).as("ahead of the cursor first").isEqualTo(20L * REGION_BYTES);
        assertThat(copy.takeStep(SIZE, 1).offset()).as("then from the start").isZero();
    }

    @Test
    void whatItAnsweredSinceTheLastFlushItAnsweredIsDirtyOnceItLeaves() {
        ReplicaCopy inSync = new ReplicaCopy(UUID.randomUUID(), null, State.IN_SYNC);
        inSync.written(0, 4096);
        long first = inSync.flushSent(); // covers region 0
        inSync.written(2L * REGION_BYTES, 4096); // answered after that FLUSH was sent: not covered
        inSync.flushAnswered(first);
        assertThat(inSync.unforcedRegions()).as("region 2 only").isEqualTo(1);
        inSync.flushSent(); // covers region 2
        inSync.written(5L * REGION_BYTES, 4096);
        inSync.leave(); // the FLUSH covering region 2 is still on its way
        assertThat(inSync.remainingBytes(SIZE)).as("regions 2 and 5").isEqualTo(2L * REGION_BYTES);
        Step s = inSync.takeStep(SIZE, 1);
        assertThat(s.offset()).isEqualTo(2L * REGION_BYTES);
        assertThat(inSync.unforcedRegions()).as("after it left").isZero();
    }

    @Test
    void aResyncStepsRegionsAreUnforcedUntilAFlushCoversThem() {
        copy.markDirty(0, REGION_BYTES);
        copy.stepAnswered(copy.takeStep(SIZE, 1), true);
        assertThat(copy.unforcedRegions()).isEqualTo(1);
        long sent = copy.flushSent();
        copy.flushAnswered(sent);
        assertThat(copy.unforcedRegions()).isZero();
        copy.flushAnswered(sent); // an answer past the count changes nothing
        assertThat(copy.unforcedRegions()).isZero();
    }

    /**
     * A FLUSH sent before the copy left, answered after it came back, covers none of what it
     * answered since: otherwise that answer ends the count of a later FLUSH still on its way, the
     * later one's regions count as forced, and when it is lost with its link they are not dirty:
     * the copy would rejoin without a write its primary answered as flushed.
     */
    @Test
    void aFlushSentBeforeTheCopyLeftForcesNothingItAnsweredAfter() {
        ReplicaCopy c = new ReplicaCopy(UUID.randomUUID(), null, State.IN_SYNC);
        long before = c.flushSent();
        c.leave(); // a write failed on it
        c.startResync();
        c.written(3L * REGION_BYTES, 4096); // a client write, answered OK while it resyncs
        long after = c.flushSent(); // a client FLUSH covering it
        c.flushAnswered(before); // the FLUSH sent before it left answers late
        assertThat(c.unforcedRegions()).as("region 3 is not forced yet").isEqualTo(1);
        c.leave(); // the later FLUSH is lost with its link
        assertThat(c.remainingBytes(SIZE)).as("region 3 is to be copied again").isEqualTo(REGION_BYTES);
        c.flushAnswered(after); // its answer, had it come, changes nothing now
        assertThat(c.remainingBytes(SIZE)).isEqualTo(REGION_BYTES);
    }

    @Test
    void aWriteOrStepAnsweredAfterItLeftIsDirty() {
        copy.markDirty(0, REGION_BYTES);
        Step s = copy.takeStep(SIZE, 1);
        copy.leave(); // another request failed, and that was handled before this step's answer
        copy.stepAnswered(s, true);
        copy.written(3L * REGION_BYTES, 4096);
        assertThat(copy.remainingBytes(SIZE)).as("regions 0 and 3").isEqualTo(2L * REGION_BYTES);
        assertThat(copy.unforcedRegions()).isZero();
    }

    @Test
    void leavingTheSetNotesWhenAndCountsAsSent() {
        ReplicaCopy inSync = new ReplicaCopy(UUID.randomUUID(), null, State.IN_SYNC);
        inSync.leave();
        assertThat(inSync.state).isEqualTo(State.OUT);
        assertThat(inSync.outSince).isNotZero();
        assertThat(inSync.sent).isEqualTo(1);
    }
}
