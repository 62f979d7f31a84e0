package io.weir.controlplane.policy;

import java.util.ArrayList;
import java.util.List;

/**
 * The consistency rules between a reservation, a limit and a burst ceiling, shared by policies
 * and by the effective policy of a volume.
 *
 * <ul>
 *   <li>{@code minIops <= maxIops} when both are set (a reservation above the limit can never
 *       be met);
 *   <li>{@code maxIops <= burstIops} and {@code maxBytesPerSec <= burstBytesPerSec} when both
 *       are set (burst credit lets a flow run above its maximum, never below);
 *   <li>a burst needs its maximum: {@code burstIops} without {@code maxIops}, or
 *       {@code burstBytesPerSec} without {@code maxBytesPerSec}, is meaningless because an
 *       unlimited flow has nothing to burst above.
 * </ul>
 * Positivity of each value is checked separately, by field constraints.
 */
public final class QosLimits {

    /**
     * One broken rule.
     *
     * @param field the member the rule is reported against
     * @param related the other member the rule involves
     * @param message a self-contained explanation naming both members and their values
     */
    public record Violation(String field, String related, String message) {
    }

    private QosLimits() {
    }

    /** Every rule that these values break, in a fixed order; empty when they are consistent. */
    public static List<Violation> check(Long minIops, Long maxIops, Long burstIops, Long maxBytesPerSec,
            Long burstBytesPerSec) {
        List<Violation> violations = new ArrayList<>();
        if (minIops != null && maxIops != null && minIops > maxIops) {
            violations.add(new Violation("minIops", "maxIops",
                    "minIops (" + minIops + ") must not exceed maxIops (" + maxIops + ")"));
        }
        burst(violations, "IOPS", "maxIops", maxIops, "burstIops", burstIops);
        burst(violations, "bytes/s", "maxBytesPerSec", maxBytesPerSec, "burstBytesPerSec", burstBytesPerSec);
        return violations;
    }

    private static void burst(List<Violation> violations, String unit, String maxField, Long max, String burstField,
            Long burst) {
        if (burst == null) {
            return;
        }
        if (max == null) {
            violations.add(new Violation(burstField, maxField,
                    burstField + " needs " + maxField + ": an unlimited " + unit + " rate has nothing to burst above"));
        } else if (burst < max) {
            violations.add(new Violation(burstField, maxField,
                    burstField + " (" + burst + ") must be at least " + maxField + " (" + max + ")"));
        }
    }
}
