package io.weir.controlplane.push;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.weir.controlplane.usage.UsageIngest;
import io.weir.protocol.UsageReport;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.web.socket.CloseStatus;

/**
 * The intake's fairness and its handling of a report that cannot be stored (issue 23, items 6 and
 * 7), driven directly: reports offered as the agent channel offers them, batches taken as the
 * intake thread takes them, a store that records each batch (and refuses a poison report the way
 * PostgreSQL does, with SQLSTATE 22003).
 */
class UsageIntakeFairnessTest {

    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final PushMetrics metrics = new PushMetrics(meters);
    private final List<List<UsageIngest.Delivery>> stored = Collections.synchronizedList(new ArrayList<>());

    /** Answers and closes of one node, as its session would get them. */
    static class Reporter implements UsageIntake.Reporter {
        final UUID node = UUID.randomUUID();
        final List<Long> acked = Collections.synchronizedList(new ArrayList<>());
        final List<Long> refused = Collections.synchronizedList(new ArrayList<>());
        final List<CloseStatus> closes = Collections.synchronizedList(new ArrayList<>());
        /** Closes asked for once the answers queued before them are sent. */
        final List<CloseStatus> closesAfterSending = Collections.synchronizedList(new ArrayList<>());

        @Override
        public UUID nodeId() {
            return node;
        }

        @Override
        public void ackUsage(long sequence) {
            acked.add(sequence);
        }

        @Override
        public void refuseUsage(long sequence, String reason) {
            refused.add(sequence);
        }

        @Override
        public void close(CloseStatus status) {
            closes.add(status);
        }

        @Override
        public void closeAfterSending(CloseStatus status) {
            closesAfterSending.add(status);
        }
    }

    private static UsageReport report(long sequence) {
        Instant from = Instant.parse("2026-12-02T05:00:00Z");
        return new UsageReport(sequence, from, from.plusSeconds(10), List.of(), List.of(), List.of());
    }

    /** One list of the most volumes a report may name, shared by every large report (the test's heap stays small). */
    private static final List<UsageReport.VolumeUsage> MANY_VOLUMES = java.util.stream.IntStream
            .range(0, UsageReport.MAX_VOLUMES).mapToObj(i -> new UsageReport.VolumeUsage(UUID.randomUUID(),
                    1, 1, 4096, 4096, 10, 10, 10, 0.0, 0, 0, 0, 0, 0, 0, 0))
            .toList();

    private static UsageReport largeReport(long sequence) {
        Instant from = Instant.parse("2026-12-02T05:00:00Z");
        return new UsageReport(sequence, from, from.plusSeconds(10), MANY_VOLUMES, List.of(), List.of());
    }

    /** Stores batches until nothing waits. */
    private static void drain(UsageIntake intake) throws InterruptedException {
        for (List<UsageIntake.Pending> batch = intake.nextBatch(0); !batch.isEmpty(); batch = intake.nextBatch(0)) {
            intake.store(batch);
        }
    }

    /**
     * A session that throws when told of its ack (one whose config cannot be sent did) costs the
     * other nodes of the batch nothing: their reports, stored with it, are acknowledged still.
     */
    @Test
    void aReporterThatThrowsOnItsAckLeavesTheOtherAcksOfItsBatchAlone() throws Exception {
        UsageIntake intake = intake(null, 0);
        Reporter broken = new Reporter() {
            @Override
            public void ackUsage(long sequence) {
                throw new IllegalStateException("the session broke");
            }
        };
        Reporter first = new Reporter();
        Reporter last = new Reporter();
        intake.offer(first, report(1));
        intake.offer(broken, report(1));
        intake.offer(last, report(1));
        List<UsageIntake.Pending> batch = intake.nextBatch(0);
        assertThat(batch).hasSize(3);
        intake.store(batch);
        assertThat(first.acked).containsExactly(1L);
        assertThat(last.acked).containsExactly(1L);
    }

    /**
     * What waits is bounded in rows (what it takes of the heap), not only in reports: 4,096 reports
     * of 16,384 volumes each, all one node may queue by count, would hold some 67 million rows.
     */
    @Test
    void aNodeSendingTheLargestReportsHoldsNoMoreRowsThanItsShare() throws Exception {
        UsageIntake intake = intake(null, 0);
        Reporter flooder = new Reporter();
        Reporter honest = new Reporter();
        for (int i = 1; i <= 200; i++) {
            intake.offer(flooder, largeReport(i));
        }
        intake.offer(honest, largeReport(1));

        assertThat(intake.waitingRows()).isLessThanOrEqualTo(UsageIntake.NODE_ROWS + UsageReport.MAX_VOLUMES + 1);
        assertThat(honest.closes).isEmpty();
        drain(intake);
        assertThat(honest.acked).containsExactly(1L);
        assertThat(flooder.acked).as("what it had waiting is stored and acknowledged").isNotEmpty()
                .hasSizeLessThan(200);
    }

    /**
     * A node over its share is closed once what it has waiting is acknowledged, not before: the
     * acknowledgements would otherwise go to a closed connection, the agent would resend the same
     * reports first after every reconnect, and the same share would be refused again, for ever.
     */
    @Test
    void aNodeOverItsShareIsClosedOnlyOnceWhatItHasWaitingIsAcknowledgedSoThatItsResendMovesOn() throws Exception {
        UsageIntake intake = intake(null, 0);
        Reporter agent = new Reporter();
        long sent = 0;
        while (meters.counter("weir.push.usage.reports.refused").count() == 0) {
            intake.offer(agent, largeReport(++sent));
        }
        intake.offer(agent, largeReport(++sent));
        assertThat(agent.closes).as("not closed while its waiting reports are unanswered").isEmpty();
        assertThat(agent.closesAfterSending).isEmpty();
        drain(intake);
        assertThat(agent.acked).as("every report taken in is acknowledged on the open connection")
                .hasSize((int) sent - 2).doesNotContain(sent - 1, sent);
        assertThat(agent.closes).as("not dropping the acknowledgements queued to it").isEmpty();
        assertThat(agent.closesAfterSending).as("then closed with 1013, once they are sent, to resend the rest")
                .hasSize(1).allSatisfy(c -> assertThat(c.getCode()).isEqualTo(1013));
    }

    /** A store that refuses any batch holding a report of {@code poisonNode} with sequence {@code poisonSequence}. */
    private UsageIntake intake(UUID poisonNode, long poisonSequence) {
        return new UsageIntake(deliveries -> {
            stored.add(List.copyOf(deliveries));
            for (UsageIngest.Delivery d : deliveries) {
                if (d.nodeId().equals(poisonNode) && d.report().sequence() == poisonSequence) {
                    throw new DataIntegrityViolationException("could not store",
                            new SQLException("integer out of range", "22003"));
                }
            }
            return deliveries.stream().map(d -> UsageIngest.Outcome.STORED).toList();
        }, metrics);
    }

    @Test
    void aFloodingNodeCannotFillTheQueueNorGetAnHonestNodeClosed() throws Exception {
        UsageIntake intake = intake(null, 0);
        Reporter flooder = new Reporter();
        Reporter honest = new Reporter();
        for (int i = 1; i <= 12_000; i++) {
            intake.offer(flooder, report(i));
        }
        intake.offer(honest, report(1));

        assertThat(honest.closes).as("the honest node is never closed").isEmpty();
        assertThat(intake.waiting()).isLessThanOrEqualTo(UsageIntake.NODE_CAPACITY + 1);

        List<UsageIntake.Pending> first = intake.nextBatch(1000);
        assertThat(first).as("a flooding node's part of a batch is short").hasSizeLessThanOrEqualTo(UsageIntake.NODE_BATCH + 1);
        assertThat(first).as("the honest report is in the first batch").anySatisfy(
                p -> assertThat(p.reporter()).isSameAs(honest));
        intake.store(first);
        assertThat(honest.acked).containsExactly(1L);
        drain(intake);
        assertThat(honest.closes).isEmpty();
        assertThat(flooder.acked).hasSize(UsageIntake.NODE_CAPACITY);
        assertThat(flooder.closes).isEmpty();
        assertThat(flooder.closesAfterSending).as("the flooder is closed with 1013 once what it had waiting is acknowledged")
                .hasSize(1).allSatisfy(c -> assertThat(c.getCode()).isEqualTo(1013));
    }

    @Test
    void whenTheQueueIsFullTheNodeHoldingTheMostGivesWayToANodeWithinItsShare() throws Exception {
        UsageIntake intake = intake(null, 0);
        List<Reporter> floods = new ArrayList<>();
        // Three nodes fill the whole queue between them, each within its own cap, the first holding the most.
        for (int n = 0; n < 3 && intake.waiting() < UsageIntake.CAPACITY; n++) {
            Reporter r = new Reporter();
            floods.add(r);
            for (int i = 1; i <= UsageIntake.NODE_CAPACITY - 100 * n && intake.waiting() < UsageIntake.CAPACITY; i++) {
                intake.offer(r, report(i));
            }
        }
        assertThat(intake.waiting()).isEqualTo(UsageIntake.CAPACITY);
        Reporter honest = new Reporter();
        intake.offer(honest, report(1));

        assertThat(honest.closes).isEmpty();
        assertThat(floods.get(0).closes).as("the node holding the most is closed").isNotEmpty();
        assertThat(floods.get(1).closes).as("a node holding less is not").isEmpty();
        List<UsageIntake.Pending> batch = intake.nextBatch(1000);
        assertThat(batch).anySatisfy(p -> assertThat(p.reporter()).isSameAs(honest));
    }

    @Test
    void eachBatchTakesTheWaitingNodesInTurn() throws Exception {
        UsageIntake intake = intake(null, 0);
        Reporter a = new Reporter();
        Reporter b = new Reporter();
        for (int i = 1; i <= 2_000; i++) {
            intake.offer(a, report(i));
        }
        for (int i = 1; i <= 10; i++) {
            intake.offer(b, report(i));
        }
        List<UsageIntake.Pending> batch = intake.nextBatch(1000);
        assertThat(batch.stream().filter(p -> p.reporter() == b).count()).as("all of b's reports").isEqualTo(10);
        assertThat(batch.stream().filter(p -> p.reporter() == a).count()).as("a's part of one batch")
                .isEqualTo(UsageIntake.NODE_BATCH);
        assertThat(batch.subList(0, 20)).extracting(p -> p.reporter() == a)
                .as("a and b alternate while both wait").containsExactly(
                        true, false, true, false, true, false, true, false, true, false,
                        true, false, true, false, true, false, true, false, true, false);
    }

    @Test
    void aReportThatCannotBeStoredIsSetAsideOnceAndTheOthersInItsBatchAreStored() throws Exception {
        Reporter poisoner = new Reporter();
        Reporter honest = new Reporter();
        UsageIntake intake = intake(poisoner.node, 2);
        intake.offer(poisoner, report(1));
        intake.offer(honest, report(1));
        intake.offer(poisoner, report(2));
        intake.offer(honest, report(2));

        intake.store(intake.nextBatch(1000));

        assertThat(honest.acked).containsExactlyInAnyOrder(1L, 2L);
        assertThat(honest.closes).isEmpty();
        assertThat(poisoner.acked).containsExactly(1L);
        assertThat(poisoner.refused).containsExactly(2L);
        assertThat(poisoner.closes).as("the poisoner is answered, not closed").isEmpty();
        long triesOfThePoison = stored.stream().filter(batch -> batch.stream()
                .anyMatch(d -> d.nodeId().equals(poisoner.node) && d.report().sequence() == 2)).count();
        assertThat(triesOfThePoison).as("the batch, then the report alone: never retried in a loop").isEqualTo(2);
        assertThat(meters.counter("weir.push.usage.reports.unstorable").count()).isEqualTo(1);
    }
}
