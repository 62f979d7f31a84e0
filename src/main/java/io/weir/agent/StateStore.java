package io.weir.agent;

import io.weir.protocol.DesiredConfig;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.format.DateTimeFormatter;
import java.time.ZoneOffset;
import java.util.HexFormat;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/**
 * The agent's last-known-good snapshot on disk: one file, {@value #FILE_NAME}, in the state
 * directory.
 *
 * <h2>Format</h2>
 * One header line, then the snapshot as JSON (exactly the {@code DesiredConfig} the control plane
 * sent):
 * <pre>
 * weir-agent-state 1 sha256=&lt;64 hex digits of the JSON&gt; length=&lt;bytes of the JSON&gt;
 * {"nodeId":"...","revision":42,...}
 * </pre>
 * A file whose header, length or checksum does not match, or whose JSON does not parse strictly
 * into a {@code DesiredConfig}, is corrupt: {@link #load()} moves it aside to
 * {@code desired-config.corrupt-<UTC time>} (kept for a post-mortem, never read again), says why,
 * and answers no snapshot. It never throws for a bad file.
 *
 * <h2>Durability</h2>
 * {@link #save} writes a temporary file in the same directory, forces it to disk, renames it over
 * the old file atomically, then forces the directory, so that after a crash at any point the file
 * holds either the old snapshot or the new one, whole.
 *
 * <p>Implementation notes: the temporary file has a fixed name; the agent saves from its one
 * event thread, so two saves never race. A leftover temporary file from a crash is overwritten by
 * the next save and ignored by {@link #load()}.
 */
final class StateStore {

    /** Name of the snapshot file in the state directory. */
    static final String FILE_NAME = "desired-config.json";

    /** Name of the temporary file a save writes before the rename. */
    static final String TEMP_NAME = FILE_NAME + ".tmp";

    /** First word of the header line. */
    static final String MAGIC = "weir-agent-state";

    /** Version of the file format, the second word of the header. */
    static final int FORMAT = 1;

    /** Longest header line accepted; a longer first line is corruption. */
    private static final int MAX_HEADER_BYTES = 256;

    private static final System.Logger LOG = System.getLogger(StateStore.class.getName());

    private static final DateTimeFormatter ASIDE_SUFFIX =
            DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss.SSS'Z'").withZone(ZoneOffset.UTC);

    private final Path dir;
    private final Clock clock;
    private final JsonMapper json = DesiredConfig.FILE_JSON;

    /** What {@link #load()} found: a snapshot, or none and possibly why. */
    record Loaded(DesiredConfig config, String problem, Path setAside) {
    }

    StateStore(Path dir, Clock clock) {
        this.dir = dir;
        this.clock = clock;
    }

    /** The state directory. */
    Path directory() {
        return dir;
    }

    /** The snapshot file. */
    Path file() {
        return dir.resolve(FILE_NAME);
    }

    /**
     * Reads the last saved snapshot. A missing file answers {@code (null, null, null)}; a corrupt
     * one is moved aside and answers {@code (null, why, where it went)}.
     *
     * @throws IOException only if the directory cannot be created or read at all
     */
    Loaded load() throws IOException {
        Files.createDirectories(dir);
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file());
        } catch (NoSuchFileException e) {
            return new Loaded(null, null, null);
        }
        String problem;
        try {
            return new Loaded(parse(bytes), null, null);
        } catch (CorruptStateException e) {
            problem = e.getMessage();
        }
        Path aside = dir.resolve("desired-config.corrupt-" + ASIDE_SUFFIX.format(clock.instant()));
        Files.move(file(), aside, StandardCopyOption.REPLACE_EXISTING);
        String message = "state file " + file() + " is corrupt (" + problem + "); moved to " + aside.getFileName()
                + " and starting without a cached config";
        LOG.log(Level.WARNING, message);
        return new Loaded(null, message, aside);
    }

    private DesiredConfig parse(byte[] bytes) throws CorruptStateException {
        int newline = -1;
        for (int i = 0; i < Math.min(bytes.length, MAX_HEADER_BYTES); i++) {
            if (bytes[i] == '\n') {
                newline = i;
                break;
            }
        }
        if (newline < 0) {
            throw new CorruptStateException(bytes.length == 0 ? "empty file" : "no header line");
        }
        String[] header = new String(bytes, 0, newline, StandardCharsets.US_ASCII).split(" ");
        if (header.length != 4 || !header[0].equals(MAGIC) || !header[2].startsWith("sha256=")
                || !header[3].startsWith("length=")) {
            throw new CorruptStateException("bad header");
        }
        if (!header[1].equals(Integer.toString(FORMAT))) {
            throw new CorruptStateException("unknown format version " + header[1]);
        }
        long length;
        try {
            length = Long.parseLong(header[3].substring("length=".length()));
        } catch (NumberFormatException e) {
            throw new CorruptStateException("bad length in header");
        }
        int bodyLength = bytes.length - newline - 1;
        if (length != bodyLength) {
            throw new CorruptStateException("truncated or extended: header says " + length + " bytes, found " + bodyLength);
        }
        String digest = sha256(bytes, newline + 1, bodyLength);
        if (!digest.equals(header[2].substring("sha256=".length()))) {
            throw new CorruptStateException("checksum mismatch");
        }
        try {
            DesiredConfig config = json.readValue(bytes, newline + 1, bodyLength, DesiredConfig.class);
            if (config == null || config.nodeId() == null || config.revision() < 0) {
                throw new CorruptStateException("not a snapshot (no node id, or a negative revision)");
            }
            return config;
        } catch (JacksonException | IllegalArgumentException | NullPointerException e) {
            throw new CorruptStateException("not a valid snapshot: " + e.getMessage());
        }
    }

    /**
     * Saves {@code config} as the last-known-good snapshot, durably and atomically (see the class
     * comment).
     */
    void save(DesiredConfig config) throws IOException {
        Files.createDirectories(dir);
        byte[] body = json.writeValueAsBytes(config);
        byte[] header = (MAGIC + " " + FORMAT + " sha256=" + sha256(body, 0, body.length) + " length=" + body.length + "\n")
                .getBytes(StandardCharsets.US_ASCII);
        Path temp = dir.resolve(TEMP_NAME);
        try (FileChannel out = FileChannel.open(temp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ByteBuffer buf = ByteBuffer.allocate(header.length + body.length).put(header).put(body).flip();
            while (buf.hasRemaining()) {
                out.write(buf);
            }
            out.force(true);
        }
        try {
            Files.move(temp, file(), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            throw new IOException("the state directory " + dir + " does not support atomic renames", e);
        }
        forceDirectory();
    }

    /** Makes the rename durable: fsync of the directory (Linux and macOS; Windows cannot open one). */
    private void forceDirectory() throws IOException {
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException e) {
            if (!System.getProperty("os.name", "").startsWith("Windows")) {
                throw e;
            }
        }
    }

    private static String sha256(byte[] bytes, int offset, int length) {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            md.update(bytes, offset, length);
            return HexFormat.of().formatHex(md.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    /** The state file does not hold a whole, valid snapshot. */
    private static final class CorruptStateException extends Exception {
        CorruptStateException(String message) {
            super(message, null, false, false);
        }
    }
}
