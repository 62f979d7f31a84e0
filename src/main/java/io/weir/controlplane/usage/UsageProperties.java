package io.weir.controlplane.usage;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Settings of usage history ({@code weir.usage.*}).
 *
 * @param retention how long each level is kept; whole partitions go once they are entirely older
 * @param partitionsAhead how many partitions of each table exist beyond the current one
 * @param maintenanceInterval how often partitions are created ahead and expired ones dropped
 * @param maxPoints most points a series may have; a longer one answers 400
 * @param maxTop most entries a top-N may ask for
 */
@ConfigurationProperties("weir.usage")
record UsageProperties(
        @DefaultValue Retention retention,
        @DefaultValue("3") int partitionsAhead,
        @DefaultValue("1h") Duration maintenanceInterval,
        @DefaultValue("2000") int maxPoints,
        @DefaultValue("100") int maxTop) {

    /**
     * Retention per level.
     *
     * @param raw raw samples (default 2 days)
     * @param minute 1-minute rollups (default 14 days)
     * @param hour 1-hour rollups (default 400 days)
     */
    record Retention(@DefaultValue("2d") Duration raw, @DefaultValue("14d") Duration minute,
            @DefaultValue("400d") Duration hour) {

        Duration of(UsageLevel level) {
            return switch (level) {
                case RAW -> raw;
                case MINUTE -> minute;
                case HOUR -> hour;
            };
        }
    }

    UsageProperties {
        if (partitionsAhead < 1 || maxPoints < 1 || maxTop < 1) {
            throw new IllegalArgumentException("weir.usage: partitions-ahead, max-points and max-top must be positive");
        }
    }
}
