package io.weir.controlplane.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Folding a node's answers: what is stored after several must be what storing each in turn gives. */
class AgentAnswerTest {

    private static final UUID NODE = UUID.randomUUID();
    private static final Instant T1 = Instant.parse("2026-12-02T13:00:00Z");
    private static final Instant T2 = T1.plusSeconds(1);
    private static final Instant T3 = T1.plusSeconds(2);

    @Test
    void aRejectionAfterAnAcknowledgementKeepsTheAppliedRevisionAndSetsTheError() {
        AgentAnswer folded = AgentAnswer.applied(NODE, 5, T1).then(AgentAnswer.rejected(NODE, 6, "unknown task", T2));
        assertThat(folded).isEqualTo(new AgentAnswer(NODE, 5L, T1, "revision 6: unknown task", T2));
    }

    @Test
    void anAcknowledgementReplacesEverythingBeforeItAndClearsTheError() {
        AgentAnswer folded = AgentAnswer.applied(NODE, 5, T1).then(AgentAnswer.rejected(NODE, 6, "x", T2))
                .then(AgentAnswer.applied(NODE, 7, T3));
        assertThat(folded).isEqualTo(new AgentAnswer(NODE, 7L, T3, null, T3));
    }

    @Test
    void rejectionsAloneLeaveTheStoredRevisionAndKeepTheLatestReason() {
        AgentAnswer folded = AgentAnswer.rejected(NODE, 6, "first", T1).then(AgentAnswer.rejected(NODE, 7, null, T2));
        assertThat(folded).isEqualTo(new AgentAnswer(NODE, null, null, "revision 7: rejected", T2));
    }

    @Test
    void aLongReasonIsCutToTheColumn() {
        String error = AgentAnswer.rejected(NODE, 1, "x".repeat(5000), T1).lastError();
        assertThat(error).hasSize(AgentAnswer.MAX_ERROR_LENGTH).startsWith("revision 1: xxx");
    }

    @Test
    void aNulInTheReasonIsDroppedForThePostgresTextColumnWouldRefuseTheWholeBatch() {
        assertThat(AgentAnswer.rejected(NODE, 3, "bad\u0000 task", T1).lastError()).isEqualTo("revision 3: bad task");
        assertThat(AgentAnswer.rejected(NODE, 3, "\u0000", T1).lastError()).isEqualTo("revision 3: rejected");
    }

    @Test
    void answersOfTwoNodesDoNotFold() {
        assertThatThrownBy(() -> AgentAnswer.applied(NODE, 1, T1).then(AgentAnswer.applied(UUID.randomUUID(), 2, T1)))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
