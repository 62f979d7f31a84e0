package io.weir.agent;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * The options of Weir's node commands ({@code agent}, {@code datanode}): one parser, one
 * precedence rule and one duration syntax for both, and the {@code --help} text that says so.
 *
 * <h2>Precedence</h2>
 * Each setting takes the first value found in: its command-line option ({@code --name value} or
 * {@code --name=value}), its environment variable, a file named by an option or variable (only the
 * node token: {@code --token-file} / {@code WEIR_TOKEN_FILE}), its default. So
 * {@code --token} beats {@code WEIR_TOKEN}, which beats a token file. An option given twice, or an
 * unknown one, is a usage error; an empty environment variable counts as unset.
 *
 * <h2>Durations</h2>
 * A number with a unit, {@code ms}, {@code s}, {@code m} or {@code h} ({@code 500ms}, {@code 10s},
 * {@code 2m}), or an ISO-8601 duration ({@code PT10S}).
 *
 * <p>Why not picocli: the agent package depends on the JDK, Jackson, the scheduler and the
 * protocol only (it is embedded in other programs), and these two commands need a few dozen lines.
 */
public final class CommandLine {

    /** The option naming the cluster CA file an https:// control plane is verified against. */
    public static final String CONTROL_PLANE_CA = "control-plane-ca";


    /** The option of the node token itself; see "Precedence". */
    public static final String TOKEN = "token";
    /** The option naming a file that holds the node token. */
    public static final String TOKEN_FILE = "token-file";

    /** Lines {@link #help} appends after the options: the precedence rule and the duration syntax. */
    static final String RULES = """
            Each setting comes from, in this order: its option, its environment variable, a file named by
            --token-file / WEIR_TOKEN_FILE (the token only), its default.
            DUR is a number with a unit, ms, s, m or h (500ms, 10s, 2m), or an ISO-8601 duration (PT10S).
            """;

    /**
     * One option: {@code --name}, its environment variable, its default (null: none), the name of
     * its value in the help ({@code URL}, {@code DUR}, ...) and its help text.
     */
    public record Option(String name, String env, String defaultValue, String valueName, String help) {
        public Option {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(env, "env");
            Objects.requireNonNull(valueName, "valueName");
            Objects.requireNonNull(help, "help");
        }
    }

    /** A command line that cannot be run; its message says why. */
    public static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        public UsageException(String message) {
            super(message);
        }
    }

    private final Map<String, Option> options = new LinkedHashMap<>();

    /** The options of one command, in the order {@code --help} lists them. */
    public CommandLine(List<Option> options) {
        for (Option o : options) {
            if (this.options.put(o.name(), o) != null) {
                throw new IllegalArgumentException("option --" + o.name() + " declared twice");
            }
        }
    }

    /** The options, in the order {@code --help} lists them. */
    public java.util.Collection<Option> options() {
        return java.util.Collections.unmodifiableCollection(options.values());
    }

    /**
     * Parses {@code args} against {@code env}.
     *
     * @throws UsageException for an unknown option, one given twice or one without its value
     */
    public Values parse(String[] args, Map<String, String> env) throws UsageException {
        Map<String, String> given = new HashMap<>();
        boolean help = false;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("--help") || arg.equals("-h")) {
                help = true;
                continue;
            }
            if (!arg.startsWith("--")) {
                throw new UsageException("unexpected argument '" + arg + "'");
            }
            String name = arg.substring(2);
            String value = null;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            }
            if (!options.containsKey(name)) {
                throw new UsageException("unknown option '--" + name + "'");
            }
            if (value == null) {
                if (i + 1 >= args.length) {
                    throw new UsageException("--" + name + " needs a value");
                }
                value = args[++i];
            }
            if (given.put(name, value) != null) {
                throw new UsageException("--" + name + " given twice");
            }
        }
        Map<String, String> values = new HashMap<>();
        for (Option o : options.values()) {
            String v = given.get(o.name());
            if (v == null) {
                String e = env.get(o.env());
                v = e == null || e.isBlank() ? o.defaultValue() : e;
            }
            values.put(o.name(), v);
        }
        return new Values(values, help);
    }

    /** The options block of {@code --help}: each option, its variable and default, then {@link #RULES}. */
    public String help() {
        StringBuilder b = new StringBuilder();
        for (Option o : options.values()) {
            b.append(String.format(Locale.ROOT, "  --%-28s %s%n", o.name() + " " + o.valueName(), o.help()));
            b.append(String.format(Locale.ROOT, "  %-30s env %s, default: %s%n", "", o.env(),
                    o.defaultValue() == null ? "none" : o.defaultValue()));
        }
        b.append(String.format(Locale.ROOT, "  --%-28s %s%n%n", "help", "print this and exit"));
        b.append(RULES);
        return b.toString();
    }

    /**
     * Parses a duration (see "Durations").
     *
     * @param zeroAllowed whether 0 is a valid value (else the duration must be positive)
     * @throws UsageException naming the option
     */
    public static Duration duration(String option, String value, boolean zeroAllowed) throws UsageException {
        String v = value.strip().toLowerCase(Locale.ROOT);
        Duration d = null;
        try {
            if (v.startsWith("p")) {
                d = Duration.parse(v.toUpperCase(Locale.ROOT));
            } else if (v.endsWith("ms")) {
                d = Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
            } else if (v.endsWith("s")) {
                d = Duration.ofSeconds(Long.parseLong(v.substring(0, v.length() - 1)));
            } else if (v.endsWith("m")) {
                d = Duration.ofMinutes(Long.parseLong(v.substring(0, v.length() - 1)));
            } else if (v.endsWith("h")) {
                d = Duration.ofHours(Long.parseLong(v.substring(0, v.length() - 1)));
            }
        } catch (NumberFormatException | DateTimeParseException | ArithmeticException e) {
            d = null;
        }
        if (d == null || d.isNegative() || d.isZero() && !zeroAllowed) {
            throw new UsageException("--" + option + " must be a " + (zeroAllowed ? "" : "positive ")
                    + "duration such as 500ms, 10s or 2m: " + value);
        }
        return d;
    }

    /** The settings of one command line, each resolved by the precedence rule. */
    public static final class Values {
        private final Map<String, String> values;
        private final boolean help;

        private Values(Map<String, String> values, boolean help) {
            this.values = values;
            this.help = help;
        }

        /** Whether {@code --help} (or {@code -h}) was given. */
        public boolean help() {
            return help;
        }

        /** The value of option {@code name}, or null if it has none (no option, variable or default). */
        public String get(String name) {
            if (!values.containsKey(name)) {
                throw new IllegalArgumentException("no option --" + name);
            }
            return values.get(name);
        }

        /** The option's value as a duration (see "Durations"); null if it has none. */
        public Duration duration(String name, boolean zeroAllowed) throws UsageException {
            String v = get(name);
            return v == null ? null : CommandLine.duration(name, v, zeroAllowed);
        }

        /** The option's value as a whole number of at least {@code min}. */
        public int integer(String name, int min) throws UsageException {
            String v = get(name);
            try {
                int n = Integer.parseInt(v.strip());
                if (n >= min) {
                    return n;
                }
            } catch (NumberFormatException | NullPointerException e) {
                // reported below
            }
            throw new UsageException("--" + name + " must be a whole number >= " + min + ": " + v);
        }

        /**
         * The node token by the precedence rule: {@code --token}, {@code WEIR_TOKEN}, then the file
         * of {@code --token-file} or {@code WEIR_TOKEN_FILE} (stripped); null if none is given.
         *
         * @throws UsageException if the token file cannot be read, or the token is blank
         */
        public String token() throws UsageException {
            String inline = get(TOKEN); // the option, else its variable
            String file = get(TOKEN_FILE);
            if (inline == null && file != null) {
                try {
                    inline = Files.readString(Path.of(file));
                } catch (IOException e) {
                    throw new UsageException("cannot read the token file " + file + ": " + e.getMessage());
                }
            }
            if (inline != null && inline.isBlank()) {
                throw new UsageException("the node token is blank");
            }
            return inline == null ? null : inline.strip();
        }
    }
}
