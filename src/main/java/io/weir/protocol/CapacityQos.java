package io.weir.protocol;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * Capacity-based QoS: reservations and limits that follow a volume's size, and the one place
 * where the formula and its rules are written down. The control plane turns the terms of a
 * policy, a volume's overrides or a tenant into the absolute numbers of {@link QosSettings} that a
 * data node enforces ({@link #resolve}); the nodes see absolute numbers only.
 *
 * <p>Like {@link QosSettings}, this type depends on the JDK alone.
 *
 * <h2>The formula</h2>
 * Each of the five QoS numbers {@code X} ({@code minIops}, {@code maxIops}, {@code burstIops},
 * {@code maxBytesPerSec}, {@code burstBytesPerSec}) has a {@link Term} of up to three members:
 * the absolute {@code X}, the rate {@code XPerGiB} and the floor {@code XFloor}. With
 * {@code c} the capacity in GiB (bytes / 2<sup>30</sup>, not rounded):
 * <pre>
 *   without XPerGiB:  X                                     (the absolute number, or none)
 *   with XPerGiB:     min(X, max(XFloor, round(XPerGiB * c)))
 * </pre>
 * where {@code round} is half-up to a whole number, a missing {@code X} caps nothing, and a missing
 * {@code XFloor} is 1 (a scaled number is never 0, which would mean "none"). So the absolute
 * field beside a rate is its <em>cap</em>, and the floor keeps small (or, by used space, empty)
 * volumes usable, as EBS gp2's 100 IOPS does. Each resolved number carries its {@link Source}:
 * {@code absolute} (no rate), {@code perGiB} (the rate gave it), {@code floor} or {@code cap}.
 *
 * <p>The capacity {@code c} is chosen by the {@link CapacityBasis}: {@code allocated} (default)
 * is the volume's size; {@code used} is what the data node reports as allocated in the volume's
 * file, which the control plane follows with a hysteresis ({@link #hysteresisBytes}). A tenant's
 * terms are scaled by the sum over its volumes.
 *
 * <h2>The rules</h2>
 * {@link #violations()} reports, against the field named first:
 * <ul>
 *   <li>a rate not positive and finite, a floor not positive;</li>
 *   <li>a floor without its rate ({@code XFloor} needs {@code XPerGiB}): it would bound nothing;</li>
 *   <li>a floor above its cap ({@code XFloor > X});</li>
 *   <li>a reservation per GiB above the limit per GiB ({@code minIopsPerGiB > maxIopsPerGiB});</li>
 *   <li>any combination whose resolved numbers break a rule of {@link QosSettings} at
 *       <em>some</em> capacity, from 0 to {@link Long#MAX_VALUE} bytes: then a resize or a change of
 *       used space, which the API does not see coming, could hand a data node a config it refuses.
 *       The resolved numbers are piecewise linear in the capacity, so they are checked (before
 *       rounding, {@code burst >= max + 1} for the strict rule) at 0, at every bend (where a rate
 *       meets its floor or its cap) and at the largest capacity; the message names the capacity.</li>
 * </ul>
 *
 * @param weight proportional share, as in {@link QosSettings}
 * @param minIops the reservation's term
 * @param maxIops the IOPS limit's term
 * @param burstIops the IOPS burst ceiling's term
 * @param maxBytesPerSec the throughput limit's term
 * @param burstBytesPerSec the throughput burst ceiling's term
 * @param capacityBasis which capacity the rates scale with; null means {@code allocated}
 */
public record CapacityQos(int weight, Term minIops, Term maxIops, Term burstIops, Term maxBytesPerSec,
        Term burstBytesPerSec, CapacityBasis capacityBasis) {

    /** Bytes in a GiB, the unit of every rate. */
    public static final long GIB = 1L << 30;

    /** Suffix of a rate's field name: {@code maxIops} + {@value} is {@code maxIopsPerGiB}. */
    public static final String PER_GIB = "PerGiB";

    /** Suffix of a floor's field name: {@code maxIops} + {@value} is {@code maxIopsFloor}. */
    public static final String FLOOR = "Floor";

    /** Field name of the basis. */
    public static final String CAPACITY_BASIS = "capacityBasis";

    /** Largest used-space change that the control plane lets pass without re-scaling: 1 GiB. */
    public static final long HYSTERESIS_BYTES = GIB;

    /** Smaller share of the size that also triggers a re-scale: 5 % (in per mille: 50). */
    public static final int HYSTERESIS_PER_MILLE = 50;

    private static final String[] NAMES = {QosSettings.MIN_IOPS, QosSettings.MAX_IOPS, QosSettings.BURST_IOPS,
        QosSettings.MAX_BYTES_PER_SEC, QosSettings.BURST_BYTES_PER_SEC};

    private static final BigDecimal GIB_DECIMAL = BigDecimal.valueOf(GIB);
    private static final BigDecimal LARGEST_GIB = BigDecimal.valueOf(Long.MAX_VALUE).divide(GIB_DECIMAL);
    private static final BigDecimal ONE = BigDecimal.ONE;
    /** Tolerance of the "for every capacity" check, whose bends are computed to 34 digits. */
    private static final BigDecimal EPSILON = new BigDecimal("1e-9");

    /** Which capacity the rates scale with. JSON form: {@code allocated} or {@code used}. */
    public enum CapacityBasis {
        /** The volume's size ({@code sizeBytes}); the default. */
        allocated,
        /** The bytes the data node reports as allocated in the volume's file. */
        used
    }

    /** Which term produced a resolved number. JSON form as named. */
    public enum Source {
        /** The absolute field, without a rate. */
        absolute,
        /** The rate times the capacity. */
        perGiB,
        /** The floor: the scaled number was below it. */
        floor,
        /** The absolute field as the cap: the scaled number was above it. */
        cap
    }

    /**
     * The members of one QoS number.
     *
     * @param absolute without a rate, the number itself; with one, its cap; null for none
     * @param perGiB the rate per GiB of capacity; null for an absolute number
     * @param floor the least the scaled number gets; null for 1. Needs {@code perGiB}
     */
    public record Term(Long absolute, Double perGiB, Long floor) {

        /** Nothing set: the number is none. */
        public static final Term NONE = new Term(null, null, null);

        /** An absolute number (or none), as before capacity-based QoS. */
        public static Term of(Long absolute) {
            return new Term(absolute, null, null);
        }

        /** Whether the number scales with capacity. */
        public boolean scales() {
            return perGiB != null;
        }

        /** Whether the term resolves to a number (not "none") at every capacity. */
        public boolean present() {
            return absolute != null || perGiB != null;
        }

        /** Member by member: each member of {@code override} if set, else this term's. */
        public Term overriddenBy(Term override) {
            return new Term(override.absolute != null ? override.absolute : absolute,
                    override.perGiB != null ? override.perGiB : perGiB,
                    override.floor != null ? override.floor : floor);
        }

        /** The resolved number at {@code capacityBytes} and where it came from; null number for none. */
        public Resolved resolve(long capacityBytes) {
            if (perGiB == null) {
                return new Resolved(absolute, absolute == null ? null : Source.absolute);
            }
            BigDecimal scaled = BigDecimal.valueOf(perGiB).multiply(BigDecimal.valueOf(Math.max(0, capacityBytes)))
                    .divide(GIB_DECIMAL);
            long rounded = scaled.setScale(0, RoundingMode.HALF_UP).min(BigDecimal.valueOf(Long.MAX_VALUE)).longValue();
            long lowest = floor != null ? floor : 1;
            if (rounded < lowest) {
                return new Resolved(lowest, floor != null ? Source.floor : Source.perGiB);
            }
            if (absolute != null && rounded > absolute) {
                return new Resolved(absolute, Source.cap);
            }
            return new Resolved(rounded, Source.perGiB);
        }

        /** The number before rounding at {@code gib} GiB; null for none. */
        BigDecimal real(BigDecimal gib) {
            if (perGiB == null) {
                return absolute == null ? null : BigDecimal.valueOf(absolute);
            }
            BigDecimal v = BigDecimal.valueOf(perGiB).multiply(gib).max(BigDecimal.valueOf(floor != null ? floor : 1));
            return absolute != null ? v.min(BigDecimal.valueOf(absolute)) : v;
        }

        /** The capacities in GiB where this term bends (its rate meets its floor or its cap). */
        void bends(TreeSet<BigDecimal> into) {
            if (perGiB == null || !(perGiB > 0) || Double.isInfinite(perGiB)) {
                return;
            }
            BigDecimal rate = BigDecimal.valueOf(perGiB);
            into.add(BigDecimal.valueOf(floor != null && floor > 0 ? floor : 1).divide(rate, MathContext.DECIMAL128));
            if (absolute != null && absolute > 0) {
                into.add(BigDecimal.valueOf(absolute).divide(rate, MathContext.DECIMAL128));
            }
        }
    }

    /**
     * One resolved number.
     *
     * @param value the absolute number, null for none
     * @param source the term that produced it, null for none
     */
    public record Resolved(Long value, Source source) {
    }

    /**
     * The absolute numbers in force at one capacity.
     *
     * @param settings what the scheduler enforces
     * @param sources where each of its five numbers came from (null for none), in the order
     *     minIops, maxIops, burstIops, maxBytesPerSec, burstBytesPerSec
     * @param capacityBytes the capacity the rates were scaled with
     */
    public record InForce(QosSettings settings, List<Source> sources, long capacityBytes) {
    }

    /** Absolute numbers only, as before capacity-based QoS. */
    public static CapacityQos absolute(QosSettings s) {
        return new CapacityQos(s.weight(), Term.of(s.minIops()), Term.of(s.maxIops()), Term.of(s.burstIops()),
                Term.of(s.maxBytesPerSec()), Term.of(s.burstBytesPerSec()), null);
    }

    /** The basis in force: {@code allocated} unless {@code used} is set. */
    public CapacityBasis basis() {
        return capacityBasis == null ? CapacityBasis.allocated : capacityBasis;
    }

    /** Whether any number scales with capacity. */
    public boolean scales() {
        for (Term t : terms()) {
            if (t.scales()) {
                return true;
            }
        }
        return false;
    }

    /** The five terms in the order of {@link InForce#sources()}. */
    public List<Term> terms() {
        return List.of(orNone(minIops), orNone(maxIops), orNone(burstIops), orNone(maxBytesPerSec),
                orNone(burstBytesPerSec));
    }

    /** The absolute numbers in force at {@code capacityBytes} (the capacity of {@link #basis()}). */
    public InForce resolve(long capacityBytes) {
        List<Term> terms = terms();
        Resolved[] r = new Resolved[terms.size()];
        List<Source> sources = new ArrayList<>();
        for (int i = 0; i < r.length; i++) {
            r[i] = terms.get(i).resolve(capacityBytes);
            sources.add(r[i].source());
        }
        return new InForce(new QosSettings(weight, r[0].value(), r[1].value(), r[2].value(), r[3].value(), r[4].value()),
                sources, capacityBytes);
    }

    /**
     * Every rule these terms break (see the class documentation), each against a field named as
     * in JSON ({@code maxIopsFloor}, {@code minIopsPerGiB}, ...); empty when valid at every
     * capacity. Includes {@link QosSettings#violations()} of the terms' absolute numbers where
     * nothing scales.
     */
    public List<QosSettings.Violation> violations() {
        List<QosSettings.Violation> violations = new ArrayList<>();
        List<Term> terms = terms();
        boolean membersValid = true;
        for (int i = 0; i < NAMES.length; i++) {
            Term t = terms.get(i);
            String name = NAMES[i];
            if (t.perGiB() != null && (!(t.perGiB() > 0) || t.perGiB().isInfinite())) {
                violations.add(new QosSettings.Violation(name + PER_GIB, null,
                        name + PER_GIB + " (" + t.perGiB() + ") must be positive, or null for none"));
                membersValid = false;
            }
            if (t.floor() != null && t.floor() <= 0) {
                violations.add(new QosSettings.Violation(name + FLOOR, null,
                        name + FLOOR + " (" + t.floor() + ") must be positive, or null for none"));
                membersValid = false;
            }
            if (t.absolute() != null && t.absolute() <= 0) {
                membersValid = false; // reported by QosSettings below
            }
            if (t.floor() != null && t.perGiB() == null) {
                violations.add(new QosSettings.Violation(name + FLOOR, name + PER_GIB,
                        name + FLOOR + " needs " + name + PER_GIB + ": a floor bounds a number that scales with capacity"));
                membersValid = false;
            } else if (t.floor() != null && t.absolute() != null && t.floor() > t.absolute()) {
                violations.add(new QosSettings.Violation(name + FLOOR, name, name + FLOOR + " (" + t.floor()
                        + ") must not exceed " + name + " (" + t.absolute() + "), the cap of " + name + PER_GIB));
                membersValid = false;
            }
        }
        Term min = terms.get(0);
        Term max = terms.get(1);
        if (min.perGiB() != null && max.perGiB() != null && min.perGiB() > max.perGiB()) {
            violations.add(new QosSettings.Violation(QosSettings.MIN_IOPS + PER_GIB, QosSettings.MAX_IOPS + PER_GIB,
                    "minIopsPerGiB (" + min.perGiB() + ") must not exceed maxIopsPerGiB (" + max.perGiB()
                            + "): a reservation above the limit can never be met"));
            membersValid = false;
        }
        if (!scales()) {
            violations.addAll(resolve(0).settings().violations());
            return violations;
        }
        violations.addAll(new QosSettings(weight, null, null, null, null, null).violations());
        if (membersValid) {
            violations.addAll(acrossCapacities(terms));
        }
        return violations;
    }

    /** True when {@link #violations()} is empty. */
    public boolean isValid() {
        return violations().isEmpty();
    }

    /**
     * The capacity change that makes the control plane re-scale a volume by used space: at least
     * the smaller of {@value #HYSTERESIS_BYTES} bytes and 5 % of its size (and at least 1 byte).
     */
    public static long hysteresisBytes(long sizeBytes) {
        return Math.max(1, Math.min(HYSTERESIS_BYTES, sizeBytes / 1000 * HYSTERESIS_PER_MILLE));
    }

    /** Whether a used-space figure moved far enough from the one in force to re-scale. */
    public static boolean beyondHysteresis(long inForceBytes, long reportedBytes, long sizeBytes) {
        return Math.abs(reportedBytes - inForceBytes) >= hysteresisBytes(sizeBytes);
    }

    private List<QosSettings.Violation> acrossCapacities(List<Term> terms) {
        TreeSet<BigDecimal> capacities = new TreeSet<>();
        capacities.add(BigDecimal.ZERO);
        capacities.add(LARGEST_GIB);
        terms.forEach(t -> t.bends(capacities));
        List<QosSettings.Violation> violations = new ArrayList<>();
        pair(violations, terms, capacities, 0, 1, false);
        pair(violations, terms, capacities, 2, 1, true);
        pair(violations, terms, capacities, 4, 3, true);
        return violations;
    }

    /**
     * Checks {@code low <= high} ({@code strict}: {@code burst >= max + 1}, and a burst needs its
     * maximum) at every capacity in {@code capacities}; reports the first capacity that breaks it.
     */
    private static void pair(List<QosSettings.Violation> violations, List<Term> terms, TreeSet<BigDecimal> capacities,
            int lowIndex, int highIndex, boolean strict) {
        Term low = terms.get(lowIndex);
        Term high = terms.get(highIndex);
        if (!low.present()) {
            return;
        }
        if (!high.present()) {
            if (strict) {
                violations.add(new QosSettings.Violation(NAMES[lowIndex], NAMES[highIndex], NAMES[lowIndex] + " needs "
                        + NAMES[highIndex] + ": an unlimited rate has nothing to burst above"));
            }
            return;
        }
        if (!low.scales() && !high.scales()) {
            return; // absolute numbers: QosSettings' own rule, reported with its usual words
        }
        for (BigDecimal gib : capacities) {
            BigDecimal a = low.real(gib);
            BigDecimal b = high.real(gib);
            boolean broken = strict ? a.compareTo(b.add(ONE).subtract(EPSILON)) < 0 : a.compareTo(b.add(EPSILON)) > 0;
            if (broken) {
                String at = "at a capacity of " + gib.stripTrailingZeros().round(MathContext.DECIMAL32).toPlainString()
                        + " GiB";
                String message = strict
                        ? NAMES[lowIndex] + " would be " + shown(a) + " and " + NAMES[highIndex] + " " + shown(b) + " "
                                + at + ": a burst must exceed its maximum by at least 1 at every capacity"
                                + " (set " + NAMES[lowIndex] + FLOOR + " above " + NAMES[highIndex] + FLOOR
                                + ", and rates and caps likewise)"
                        : NAMES[lowIndex] + " would be " + shown(a) + " and " + NAMES[highIndex] + " " + shown(b) + " "
                                + at + ": a reservation must not exceed the limit at any capacity"
                                + " (floors, rates and caps of minIops must not exceed those of maxIops)";
                String field = low.scales() ? NAMES[lowIndex] + PER_GIB : NAMES[lowIndex];
                String related = high.scales() ? NAMES[highIndex] + PER_GIB : NAMES[highIndex];
                violations.add(new QosSettings.Violation(field, related, message));
                return;
            }
        }
    }

    private static String shown(BigDecimal v) {
        return v.stripTrailingZeros().round(MathContext.DECIMAL32).toPlainString();
    }

    private static Term orNone(Term t) {
        return t == null ? Term.NONE : t;
    }
}
