package io.weir.protocol;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The six QoS fields of a flow and the rules between them: the one contract between the control
 * plane, which accepts them through its REST API, and the scheduler on a data node, which
 * enforces them. Both check a value through this type, so the API never answers 200 to a
 * configuration that a data node would refuse.
 *
 * <p>This type depends on the JDK alone (no Jackson), so that {@code io.weir.scheduler} may use it.
 *
 * <h2>The rules</h2>
 * <ul>
 *   <li>{@code weight} is in [{@value #MIN_WEIGHT}, {@value #MAX_WEIGHT}];</li>
 *   <li>each of the five limits is either {@code null} (none: no reservation, unlimited, no
 *       bursting) or positive;</li>
 *   <li>{@code minIops <= maxIops} when both are set: a reservation above the limit can never be
 *       met;</li>
 *   <li>a burst needs its maximum ({@code burstIops} needs {@code maxIops}, {@code burstBytesPerSec}
 *       needs {@code maxBytesPerSec}): an unlimited flow has nothing to burst above;</li>
 *   <li>a burst is strictly above its maximum ({@code burstIops > maxIops}): a burst equal to the
 *       maximum would be a second name for "no bursting", and the scheduler's burst bucket needs
 *       a positive headroom;</li>
 *   <li>across flows, {@linkplain #checkReservations a tenant's} {@code maxIops} is at least the sum
 *       of its volumes' {@code minIops}: reservations the tenant's own limit cannot carry are
 *       infeasible.</li>
 * </ul>
 * {@link #violations()} reports every broken rule at once, each with the field it is reported
 * against and the other field it involves, so that callers can name them in a 400 answer.
 *
 * <p>The scheduler's wire of "none" is {@code 0} (primitive longs); {@link #ofScheduler} maps it
 * to {@code null} here.
 *
 * @param weight proportional share among siblings, {@value #MIN_WEIGHT}-{@value #MAX_WEIGHT}
 * @param minIops reservation (mClock minimum), null for none
 * @param maxIops IOPS limit, null for unlimited
 * @param burstIops IOPS that banked burst credit may reach, null for no bursting
 * @param maxBytesPerSec throughput limit in bytes/s, null for unlimited
 * @param burstBytesPerSec throughput that banked burst credit may reach, null for no bursting
 */
public record QosSettings(int weight, Long minIops, Long maxIops, Long burstIops, Long maxBytesPerSec,
        Long burstBytesPerSec) {

    /** Smallest allowed weight. */
    public static final int MIN_WEIGHT = 1;

    /** Largest allowed weight. */
    public static final int MAX_WEIGHT = 10_000;

    /** Weight of a flow that does not set one. */
    public static final int DEFAULT_WEIGHT = 100;

    /** Field names, as in JSON and in {@link Violation#field()}. */
    public static final String WEIGHT = "weight";
    /** Field name of the reservation. */
    public static final String MIN_IOPS = "minIops";
    /** Field name of the IOPS limit. */
    public static final String MAX_IOPS = "maxIops";
    /** Field name of the IOPS burst ceiling. */
    public static final String BURST_IOPS = "burstIops";
    /** Field name of the throughput limit. */
    public static final String MAX_BYTES_PER_SEC = "maxBytesPerSec";
    /** Field name of the throughput burst ceiling. */
    public static final String BURST_BYTES_PER_SEC = "burstBytesPerSec";

    /**
     * One broken rule.
     *
     * @param field the field the rule is reported against
     * @param related the other field the rule involves, or null for a rule on one field
     * @param message a self-contained explanation naming the fields and their values
     */
    public record Violation(String field, String related, String message) {
    }

    /**
     * Settings from the scheduler's primitive form, where {@code 0} means none. A negative value is
     * kept as it is, so that {@link #violations()} reports it.
     */
    public static QosSettings ofScheduler(int weight, long minIops, long maxIops, long burstIops, long maxBytesPerSec,
            long burstBytesPerSec) {
        return new QosSettings(weight, orNull(minIops), orNull(maxIops), orNull(burstIops), orNull(maxBytesPerSec),
                orNull(burstBytesPerSec));
    }

    /** Every rule these settings break, in a fixed order (field order); empty when they are valid. */
    public List<Violation> violations() {
        List<Violation> violations = new ArrayList<>();
        if (weight < MIN_WEIGHT || weight > MAX_WEIGHT) {
            violations.add(new Violation(WEIGHT, null,
                    "weight (" + weight + ") must be in [" + MIN_WEIGHT + ", " + MAX_WEIGHT + "]"));
        }
        positive(violations, MIN_IOPS, minIops);
        positive(violations, MAX_IOPS, maxIops);
        positive(violations, BURST_IOPS, burstIops);
        positive(violations, MAX_BYTES_PER_SEC, maxBytesPerSec);
        positive(violations, BURST_BYTES_PER_SEC, burstBytesPerSec);
        violations.addAll(consistency());
        return violations;
    }

    /**
     * The rules between fields that these settings break, leaving out any rule that involves a
     * field which is not positive (that field is reported on its own by {@link #violations()}).
     * For callers whose own field checks already report positivity and the weight.
     */
    public List<Violation> consistency() {
        List<Violation> violations = new ArrayList<>();
        if (usable(minIops) && usable(maxIops) && minIops > maxIops) {
            violations.add(new Violation(MIN_IOPS, MAX_IOPS,
                    "minIops (" + minIops + ") must not exceed maxIops (" + maxIops + ")"));
        }
        burst(violations, "IOPS", MAX_IOPS, maxIops, BURST_IOPS, burstIops);
        burst(violations, "bytes/s", MAX_BYTES_PER_SEC, maxBytesPerSec, BURST_BYTES_PER_SEC, burstBytesPerSec);
        return violations;
    }

    /** True when {@link #violations()} is empty. */
    public boolean isValid() {
        return violations().isEmpty();
    }

    /**
     * Returns these settings if they are valid.
     *
     * @param what names the flow in the exception's message, e.g. {@code "volume 'v1'"}
     * @throws IllegalArgumentException naming every broken rule
     */
    public QosSettings requireValid(String what) {
        List<Violation> violations = violations();
        if (!violations.isEmpty()) {
            throw new IllegalArgumentException(what + ": " + String.join("; ",
                    violations.stream().map(Violation::message).toList()));
        }
        return this;
    }

    /**
     * {@code sum + minIops} of reservations (never negative), saturated at {@code Long.MAX_VALUE}:
     * the sum {@link #checkReservations} takes must not wrap to a negative number that every
     * limit carries.
     */
    public static long addReservation(long sum, long minIops) {
        return sum > Long.MAX_VALUE - minIops ? Long.MAX_VALUE : sum + minIops;
    }

    /**
     * The rule across flows: a tenant's IOPS limit must carry the sum of its volumes' reservations.
     *
     * @param tenantMaxIops the tenant's {@code maxIops}, null (or 0) for unlimited
     * @param sumOfVolumeMinIops the sum of the {@code minIops} of the tenant's volumes (0 for none)
     * @return the violation, reported against the tenant's {@code maxIops}, or empty
     */
    public static Optional<Violation> checkReservations(Long tenantMaxIops, long sumOfVolumeMinIops) {
        if (tenantMaxIops != null && tenantMaxIops > 0 && sumOfVolumeMinIops > tenantMaxIops) {
            return Optional.of(new Violation(MAX_IOPS, MIN_IOPS, "maxIops (" + tenantMaxIops
                    + ") is below the sum of its volumes' minIops (" + sumOfVolumeMinIops + ")"));
        }
        return Optional.empty();
    }

    private static void positive(List<Violation> violations, String field, Long value) {
        if (value != null && value <= 0) {
            violations.add(new Violation(field, null,
                    field + " (" + value + ") must be positive, or null for none"));
        }
    }

    private static void burst(List<Violation> violations, String unit, String maxField, Long max, String burstField,
            Long burst) {
        if (!usable(burst) || (max != null && max <= 0)) {
            return;
        }
        if (max == null) {
            violations.add(new Violation(burstField, maxField,
                    burstField + " needs " + maxField + ": an unlimited " + unit + " rate has nothing to burst above"));
        } else if (burst <= max) {
            violations.add(new Violation(burstField, maxField,
                    burstField + " (" + burst + ") must be greater than " + maxField + " (" + max + ")"));
        }
    }

    private static boolean usable(Long value) {
        return value != null && value > 0;
    }

    private static Long orNull(long value) {
        return value == 0 ? null : value;
    }
}
