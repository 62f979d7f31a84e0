package io.weir.datanode;

import java.io.IOException;
import java.io.Reader;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * What a primary last reported of a replicated volume's in-sync set, kept beside the volume's
 * files ({@code <id>.rep}) so that a restart does not forget it: the epoch, the sync sequence, the
 * copies in sync, and the copies the control plane may hold in sync. The config a node keeps can
 * be older than its last report, since the control plane echoes a report only with its next push;
 * it may hold any set reported since the last one echoed. So a restarted primary (rules 6 and 7 of
 * {@link ReplicatedVolume}) takes the copies in sync from here, asks every copy the control plane
 * may hold in sync (any of them could have been promoted meanwhile), acknowledges writes only once
 * its report is echoed if one of those is out of sync here, and goes on from the last sequence it
 * reported, so that its next report rises above it and the echo can confirm it.
 *
 * <p>Written at every new epoch of the primary and before every report of a new sequence (a
 * sequence whose state could not be written is not reported): to a temporary file, forced, then
 * renamed over the old one with the directory forced ({@link DurableFiles}), so a crash leaves the old state or the new,
 * never a mix. A {@link java.util.Properties} text file: {@code epoch}, {@code sequence},
 * {@code inSync} and {@code maybeInSync} (node ids, comma-separated; the version before kept no
 * {@code maybeInSync}: read as null, any copy), and {@code tokens}, the token each copy's data
 * file holds (rule 8 of {@link ReplicatedVolume}: {@code node=token}, comma-separated; none in a
 * file of the versions before).
 *
 * @param maybeInSync the copies in sync in any set reported since the control plane last echoed
 *     this node's current set; it holds {@code inSync}; null in a file of the version before,
 *     which kept none
 * @param tokens the copies' tokens, by node
 */
record SyncState(long epoch, long sequence, Set<UUID> inSync, Set<UUID> maybeInSync, Map<UUID, Long> tokens) {

    /** A state with no copy tokens. */
    SyncState(long epoch, long sequence, Set<UUID> inSync, Set<UUID> maybeInSync) {
        this(epoch, sequence, inSync, maybeInSync, Map.of());
    }

    /** The file's name after the volume id. */
    static final String SUFFIX = ".rep";

    SyncState {
        inSync = Set.copyOf(inSync);
        maybeInSync = maybeInSync == null ? null : Set.copyOf(maybeInSync);
        tokens = tokens == null ? Map.of() : Map.copyOf(tokens);
        if (maybeInSync != null && !maybeInSync.containsAll(inSync)) {
            throw new IllegalArgumentException("the copies maybe in sync " + maybeInSync + " leave out some in sync " + inSync);
        }
    }

    /**
     * The state kept in {@code file}, or null if there is none.
     *
     * @throws IOException if it cannot be read or does not parse
     */
    static SyncState read(Path file) throws IOException {
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            p.load(r);
        } catch (NoSuchFileException e) {
            return null;
        } catch (IllegalArgumentException e) { // a malformed unicode escape
            throw new IOException(file + " does not parse: " + e, e);
        }
        try {
            SyncState s = new SyncState(Long.parseLong(p.getProperty("epoch")), Long.parseLong(p.getProperty("sequence")),
                    nodes(p, "inSync"), p.containsKey("maybeInSync") ? nodes(p, "maybeInSync") : null,
                    tokens(p.getProperty("tokens", "")));
            if (s.epoch() < 1 || s.sequence() < 0) {
                throw new IllegalArgumentException("epoch " + s.epoch() + ", sequence " + s.sequence());
            }
            return s;
        } catch (RuntimeException e) { // a missing key, a number or an id that does not parse
            throw new IOException(file + " does not parse: " + e, e);
        }
    }

    /**
     * The copies' tokens kept in {@code file}, none if there is no file or it cannot be read (its
     * copies are then given new tokens, trusted as before).
     */
    static Map<UUID, Long> tokensIn(Path file) {
        try {
            SyncState s = read(file);
            return s == null ? Map.of() : s.tokens();
        } catch (IOException e) {
            return Map.of();
        }
    }

    private static Map<UUID, Long> tokens(String text) {
        Map<UUID, Long> m = new HashMap<>();
        if (!text.isEmpty()) {
            for (String pair : text.split(",")) {
                int eq = pair.indexOf('=');
                m.put(UUID.fromString(pair.substring(0, eq)), Long.parseLong(pair.substring(eq + 1)));
            }
        }
        return m;
    }

    /** The node ids of {@code key}: an empty value is none, a missing key an error. */
    private static Set<UUID> nodes(Properties p, String key) {
        String ids = p.getProperty(key);
        if (ids == null) {
            throw new IllegalArgumentException("no " + key);
        }
        return ids.isEmpty() ? Set.of() : Arrays.stream(ids.split(",")).map(UUID::fromString).collect(Collectors.toSet());
    }

    /** Replaces {@code file} with this state, durably. */
    void write(Path file) throws IOException {
        Properties p = new Properties();
        p.setProperty("epoch", Long.toString(epoch));
        p.setProperty("sequence", Long.toString(sequence));
        p.setProperty("inSync", ids(inSync));
        p.setProperty("maybeInSync", ids(maybeInSync));
        p.setProperty("tokens", tokens.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).sorted()
                .collect(Collectors.joining(",")));
        StringWriter text = new StringWriter();
        p.store(text, "the in-sync set this node last reported as the volume's primary");
        DurableFiles.replace(file, text.toString());
    }

    private static String ids(Set<UUID> nodes) {
        return nodes.stream().map(UUID::toString).sorted().collect(Collectors.joining(","));
    }
}
