package io.weir.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.weir.protocol.QosSettings.Violation;
import org.junit.jupiter.api.Test;

class QosSettingsTest {

    @Test
    void unlimitedSettingsWithAWeightInRangeAreValid() {
        assertThat(new QosSettings(1, null, null, null, null, null).violations()).isEmpty();
        assertThat(new QosSettings(10_000, 10L, 100L, 101L, 1000L, 2000L).violations()).isEmpty();
    }

    @Test
    void aBurstEqualToItsMaximumIsRefused() {
        assertThat(new QosSettings(100, null, 100L, 100L, 10L, 10L).violations()).containsExactly(
                new Violation("burstIops", "maxIops", "burstIops (100) must be greater than maxIops (100)"),
                new Violation("burstBytesPerSec", "maxBytesPerSec",
                        "burstBytesPerSec (10) must be greater than maxBytesPerSec (10)"));
    }

    @Test
    void everyBrokenRuleIsReportedWithItsFields() {
        assertThat(new QosSettings(0, 0L, -1L, 5L, null, 7L).violations())
                .extracting(Violation::field, Violation::related)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("weight", null),
                        org.assertj.core.groups.Tuple.tuple("minIops", null),
                        org.assertj.core.groups.Tuple.tuple("maxIops", null),
                        org.assertj.core.groups.Tuple.tuple("burstBytesPerSec", "maxBytesPerSec"));
        assertThat(new QosSettings(100, 200L, 100L, null, null, null).violations())
                .containsExactly(new Violation("minIops", "maxIops", "minIops (200) must not exceed maxIops (100)"));
        assertThat(new QosSettings(100, null, null, 5L, null, null).consistency())
                .extracting(Violation::field).containsExactly("burstIops");
    }

    @Test
    void theSchedulersZeroMeansNone() {
        assertThat(QosSettings.ofScheduler(100, 0, 0, 0, 0, 0)).isEqualTo(new QosSettings(100, null, null, null, null, null));
        assertThat(QosSettings.ofScheduler(100, -1, 0, 0, 0, 0).violations()).extracting(Violation::field)
                .containsExactly("minIops");
    }

    @Test
    void requireValidNamesTheFlowAndEveryRule() {
        assertThatThrownBy(() -> new QosSettings(100, 300L, 200L, 200L, null, null).requireValid("volume 'v1'"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("volume 'v1': minIops (300) must not exceed maxIops (200); "
                        + "burstIops (200) must be greater than maxIops (200)");
    }

    @Test
    void aTenantLimitMustCarryItsVolumesReservations() {
        assertThat(QosSettings.checkReservations(100L, 100)).isEmpty();
        assertThat(QosSettings.checkReservations(null, 1_000_000)).isEmpty();
        assertThat(QosSettings.checkReservations(100L, 101)).contains(new Violation("maxIops", "minIops",
                "maxIops (100) is below the sum of its volumes' minIops (101)"));
    }
}
