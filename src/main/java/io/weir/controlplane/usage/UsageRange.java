package io.weir.controlplane.usage;

import io.weir.controlplane.web.FieldError;
import io.weir.controlplane.web.RequestValidationException;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The {@code from}, {@code to} and {@code step} of a usage query, checked and aligned: {@code from}
 * is rounded down and {@code to} up to a multiple of the step (since the epoch), so point
 * {@code i} covers {@code [from + i*step, from + (i+1)*step)} and the points of two queries with
 * the same step line up.
 *
 * @param from first point's start (inclusive)
 * @param to last point's end (exclusive)
 * @param step width of a point
 * @param level the coarsest level whose buckets divide the step
 */
record UsageRange(Instant from, Instant to, Duration step, UsageLevel level) {

    /** Earliest {@code from} or {@code to} accepted (years with four digits; milliseconds since the epoch stay in a long). */
    static final Instant EARLIEST = Instant.parse("0001-01-01T00:00:00Z");

    /** Latest {@code from} or {@code to} accepted. */
    static final Instant LATEST = Instant.parse("9999-12-31T23:59:59Z");

    /** Default length of a range given without {@code from}. */
    static final Duration DEFAULT_LENGTH = Duration.ofHours(1);

    /** Steps chosen when none is given: the smallest that keeps a series within {@link #AUTO_POINTS}. */
    static final List<Duration> AUTO_STEPS = List.of(Duration.ofSeconds(10), Duration.ofSeconds(30),
            Duration.ofMinutes(1), Duration.ofMinutes(5), Duration.ofMinutes(15), Duration.ofMinutes(30),
            Duration.ofHours(1), Duration.ofHours(6), Duration.ofDays(1));

    /** Most points of a series with an automatic step. */
    static final int AUTO_POINTS = 360;

    /** Smallest step accepted. */
    static final Duration MIN_STEP = Duration.ofSeconds(1);

    /** Largest step accepted, in days: about 100 years, far wider than any retention, and within a long of milliseconds. */
    static final int MAX_STEP_DAYS = 36_600;

    /** {@link #MAX_STEP_DAYS} as a duration. */
    static final Duration MAX_STEP = Duration.ofDays(MAX_STEP_DAYS);

    int points() {
        return (int) (Duration.between(from, to).toMillis() / step.toMillis());
    }

    /**
     * Parses and checks the parameters.
     *
     * @throws RequestValidationException 400 naming each bad parameter
     */
    static UsageRange parse(String fromText, String toText, String stepText, Instant now, UsageProperties properties) {
        List<FieldError> errors = new ArrayList<>();
        Instant to = instant("to", toText, now, errors);
        Instant from = instant("from", fromText, to == null ? null : to.minus(DEFAULT_LENGTH), errors);
        Duration step = null;
        if (stepText != null && !stepText.isBlank()) {
            step = duration(stepText.trim());
            if (step == null) {
                errors.add(new FieldError("step", "not a duration: give seconds (60), a unit (10s, 5m, 1h, 1d) or ISO-8601 (PT5M)"));
            } else if (step.compareTo(MIN_STEP) < 0 || step.getNano() != 0) {
                errors.add(new FieldError("step", "must be a whole number of seconds, at least 1 s"));
                step = null;
            } else if (step.compareTo(MAX_STEP) > 0) {
                errors.add(new FieldError("step", "must be at most " + MAX_STEP.toDays() + " days (" + MAX_STEP + ")"));
                step = null;
            }
        }
        if (from != null && to != null && !from.isBefore(to)) {
            errors.add(new FieldError("from", "must be before to (" + to + ")"));
        }
        if (!errors.isEmpty()) {
            throw new RequestValidationException(errors);
        }
        if (step == null) {
            long length = Duration.between(from, to).toMillis();
            step = AUTO_STEPS.get(AUTO_STEPS.size() - 1);
            for (Duration s : AUTO_STEPS) {
                if (length / s.toMillis() <= AUTO_POINTS) {
                    step = s;
                    break;
                }
            }
        }
        long w = step.toMillis();
        Instant alignedFrom = Instant.ofEpochMilli(Math.floorDiv(from.toEpochMilli(), w) * w);
        Instant alignedTo = Instant.ofEpochMilli(-Math.floorDiv(-to.toEpochMilli(), w) * w);
        long points = Duration.between(alignedFrom, alignedTo).toMillis() / w;
        if (points > properties.maxPoints()) {
            throw new RequestValidationException("step", "a step of " + step + " from " + alignedFrom + " to " + alignedTo
                    + " gives " + points + " points; at most " + properties.maxPoints() + " are served: use a larger step");
        }
        UsageLevel level = w % UsageLevel.HOUR.width.toMillis() == 0 ? UsageLevel.HOUR
                : w % UsageLevel.MINUTE.width.toMillis() == 0 ? UsageLevel.MINUTE : UsageLevel.RAW;
        Duration retention = properties.retention().of(level);
        // the from asked for, not its step's start: that may lie before the horizon (by up to a
        // step, 1970 for a step of a century), and the first point then holds what is still kept
        if (from.isBefore(now.minus(retention))) {
            String hint = switch (level) {
                case RAW -> "; a step that is a multiple of 1 minute reads the 1-minute rollups, kept "
                        + properties.retention().minute();
                case MINUTE -> "; a step that is a multiple of 1 hour reads the 1-hour rollups, kept "
                        + properties.retention().hour();
                case HOUR -> "";
            };
            throw new RequestValidationException("from", "a step of " + step + " is served from the " + level.wireName()
                    + " level, which is kept for " + retention + ": from must be after " + now.minus(retention) + hint);
        }
        return new UsageRange(alignedFrom, alignedTo, step, level);
    }

    private static Instant instant(String field, String text, Instant fallback, List<FieldError> errors) {
        if (text == null || text.isBlank()) {
            return fallback;
        }
        Instant parsed;
        try {
            parsed = Instant.parse(text.trim());
        } catch (DateTimeParseException e) {
            try {
                parsed = java.time.OffsetDateTime.parse(text.trim()).toInstant();
            } catch (DateTimeParseException e2) {
                errors.add(new FieldError(field, "not an RFC 3339 timestamp such as 2026-01-01T00:00:00Z"));
                return null;
            }
        }
        if (parsed.isBefore(EARLIEST) || parsed.isAfter(LATEST)) {
            errors.add(new FieldError(field, "must be from " + EARLIEST + " to " + LATEST));
            return null;
        }
        return parsed;
    }

    /** Parses 60, 10s, 5m, 1h, 1d or PT5M; null if none of them. */
    static Duration duration(String s) {
        try {
            if (s.matches("\\d{1,9}")) {
                return Duration.ofSeconds(Long.parseLong(s));
            }
            if (s.matches("\\d{1,9}[smhd]")) {
                long n = Long.parseLong(s.substring(0, s.length() - 1));
                return switch (s.charAt(s.length() - 1)) {
                    case 's' -> Duration.ofSeconds(n);
                    case 'm' -> Duration.ofMinutes(n);
                    case 'h' -> Duration.ofHours(n);
                    default -> Duration.ofDays(n);
                };
            }
            return Duration.parse(s.toUpperCase(Locale.ROOT));
        } catch (DateTimeParseException | ArithmeticException e) {
            return null;
        }
    }
}
