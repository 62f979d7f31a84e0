package io.weir.agent;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Clock;

/**
 * The numbers of an agent's usage reports, never reused: not after a restart, not after the
 * state directory was lost, as long as the clock does not go back while the directory is lost too.
 *
 * <p>The control plane counts each (node, sequence) once and keeps the pairs it stored for its
 * raw-usage retention (days): a restarted agent that began again at 1 would have its new reports
 * taken for resends and silently dropped. So a new run starts above both of:
 * <ul>
 *   <li>the reservation in the state directory, file {@value #FILE_NAME}: a number no earlier run
 *       got to (written durably before any number below it is used, {@value #BLOCK} at a time, so
 *       a run writes the file once per {@value #BLOCK} reports);</li>
 *   <li>the wall clock in milliseconds at start: an earlier run used one number per report,
 *       and reports are made once per reporting interval (a second at the least), so its numbers
 *       stayed far below the clock's milliseconds.</li>
 * </ul>
 * Either alone suffices: the file when the clock stepped back, the clock when the directory was
 * wiped (a container without a volume).
 *
 * <p>Implementation notes: called under the {@link UsageReporter}'s lock, from the thread that
 * ticks it; a reservation that cannot be written is logged and numbering goes on (the clock
 * floor still holds at the next start), rather than stopping usage reports.
 */
final class UsageSequences implements UsageReporter.Sequences {

    /** Name of the reservation file in the state directory. */
    static final String FILE_NAME = "usage-sequence";

    /** Numbers reserved per write of the file. */
    static final long BLOCK = 10_000;

    private static final System.Logger LOG = System.getLogger(UsageSequences.class.getName());

    private final Path dir;
    private long next;
    private long reserved;

    private UsageSequences(Path dir, long next) {
        this.dir = dir;
        this.next = next;
    }

    /** Reads the reservation and reserves the first block of this run. */
    static UsageSequences open(Path dir, Clock clock) throws IOException {
        Files.createDirectories(dir);
        long stored = 1;
        try {
            String text = Files.readString(dir.resolve(FILE_NAME), StandardCharsets.US_ASCII).strip();
            stored = Long.parseLong(text);
        } catch (NoSuchFileException e) {
            // first run, or a wiped directory: the clock floor alone
        } catch (NumberFormatException | IOException e) { // not a number, not text, or not readable
            LOG.log(Level.WARNING, "{0} is unreadable ({1}); numbering usage reports from the clock", dir.resolve(FILE_NAME),
                    e.toString());
        }
        UsageSequences s = new UsageSequences(dir, Math.max(Math.max(stored, 1), clock.millis()));
        try {
            s.reserve();
        } catch (IOException e) { // as in next(): a full disk must not stop the node, only this guarantee's margin
            LOG.log(Level.ERROR, "cannot write " + dir.resolve(FILE_NAME) + "; usage report numbers rely on the clock", e);
        }
        return s;
    }

    @Override
    public long next() {
        if (next >= reserved) {
            try {
                reserve();
            } catch (IOException e) {
                LOG.log(Level.ERROR, "cannot write " + dir.resolve(FILE_NAME) + "; usage report numbers rely on the clock", e);
            }
        }
        return next++;
    }

    /** The number the next report gets. */
    long peek() {
        return next;
    }

    /** Writes {@code next + BLOCK} durably (temp file, fsync, rename, fsync of the directory). */
    private void reserve() throws IOException {
        long upTo = next + BLOCK;
        Path temp = dir.resolve(FILE_NAME + ".tmp");
        try (FileChannel out = FileChannel.open(temp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            out.write(ByteBuffer.wrap((upTo + "\n").getBytes(StandardCharsets.US_ASCII)));
            out.force(true);
        }
        Files.move(temp, dir.resolve(FILE_NAME), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException e) {
            if (!System.getProperty("os.name", "").startsWith("Windows")) {
                throw e;
            }
        }
        reserved = upTo;
    }
}
