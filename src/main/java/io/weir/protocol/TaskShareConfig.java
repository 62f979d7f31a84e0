package io.weir.protocol;

import org.jspecify.annotations.Nullable;

import com.fasterxml.jackson.annotation.JsonClassDescription;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/**
 * The CPU share of one scheduler task (foreground, gc, flush, replication, scrub, ...).
 *
 * @param name task name
 * @param share static CPU share, 1-10000; the root scheduler runs the task with the lowest
 *     worker time (CPU time, plus time blocked in the store) divided by share
 * @param dynamic optional curve that makes the share follow a utilization signal; null for a
 *     static share
 */
@JsonClassDescription("The CPU share of one scheduler task (foreground, gc, flush, replication, scrub, ...).")
public record TaskShareConfig(
        @JsonPropertyDescription("Task name.") String name,
        @JsonPropertyDescription("Static CPU share, 1-10000: the root scheduler runs the task with the lowest worker time (CPU time, plus time blocked in the store) divided by share.") int share,
        @JsonPropertyDescription("Optional curve that makes the share follow a utilization signal; null for a static share.") @Nullable DynamicShare dynamic) {

    /**
     * A share that follows a utilization signal u in [0, 1] supplied by the data node: {@code low}
     * while u &lt; t1, {@code high} while u &gt; t2, and a ramp between.
     *
     * @param t1 threshold below which the share is {@code low}
     * @param t2 threshold above which the share is {@code high}; t1 &lt; t2
     * @param low share at or below t1
     * @param high share at or above t2
     * @param curve shape of the ramp between t1 and t2
     */
    @JsonClassDescription("A share that follows a utilization signal u in [0, 1]: low below t1, high above t2, and a ramp between.")
    public record DynamicShare(
            @JsonPropertyDescription("Threshold below which the share is low.") double t1,
            @JsonPropertyDescription("Threshold above which the share is high; t1 < t2.") double t2,
            @JsonPropertyDescription("Share at or below t1.") int low,
            @JsonPropertyDescription("Share at or above t2.") int high,
            @JsonPropertyDescription("Shape of the ramp between t1 and t2: linear or exponential.") Curve curve) {
    }

    /** Shape of a dynamic share's ramp. JSON form: {@code linear} or {@code exponential}. */
    public enum Curve {
        linear,
        exponential
    }
}
