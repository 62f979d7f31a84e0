package io.weir.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.weir.protocol.UsageReport.Gap;
import io.weir.protocol.UsageReport.TaskUsage;
import io.weir.protocol.UsageReport.VolumeUsage;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

class UsageReportJsonTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @Test
    void aReportSurvivesItsJsonFormWithRfc3339Timestamps() {
        Instant from = Instant.parse("2026-12-02T05:00:00Z");
        UsageReport report = new UsageReport(7, from, from.plusSeconds(10),
                List.of(new VolumeUsage(UUID.randomUUID(), 10, 20, 40960, 163840, 120, 900, 4000, 1.5, 2_000_000, 1, 350_000)),
                List.of(new TaskUsage("foreground", 30, 9_000_000, 700), new TaskUsage("flush", 4, 1_000_000, 250.5)),
                List.of(new Gap(2, 4, from.minusSeconds(40), from.minusSeconds(10))));
        String text = JSON.writeValueAsString(report);
        JsonNode tree = JSON.readTree(text);
        assertThat(tree.get("from").asString()).isEqualTo("2026-12-02T05:00:00Z");
        assertThat(tree.get("volumes").get(0).get("latencyP99Us").asLong()).isEqualTo(900);
        assertThat(tree.get("gaps").get(0).get("lastSequence").asLong()).isEqualTo(4);
        assertThat(JSON.readValue(text, UsageReport.class)).isEqualTo(report);
    }

    @Test
    void impossibleFiguresAreRefused() {
        Instant t = Instant.parse("2026-12-02T05:00:00Z");
        assertThatThrownBy(() -> new UsageReport(0, t, t, List.of(), List.of(), List.of()))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new UsageReport(1, t, t.minusSeconds(1), List.of(), List.of(), List.of()))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new VolumeUsage(UUID.randomUUID(), -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Gap(3, 2, t, t)).isInstanceOf(IllegalArgumentException.class);
    }
}
