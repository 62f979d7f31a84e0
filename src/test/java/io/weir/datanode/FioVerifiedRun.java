package io.weir.datanode;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One fio run of the replication kill tests: 4 KiB random writes at QD32 to the first
 * {@value #SIZE} of a volume (or a range of it) with {@code --verify=crc32c --verify_backlog}, paced by
 * the volume's own cap ({@link ReplicatedPair#MAX_IOPS}) so that a kill lands while writes are in
 * flight, its verify state and completion log kept in its own directory. After its server was killed it is verified against wherever the volume is served next
 * ({@code --verify_only --verify_state_load}).
 *
 * <p>fio's saved state also lists the writes still in flight when the connection died (never
 * acknowledged, so they may be missing), so the writes it saw acknowledged are taken from its
 * completion log ({@code --write_lat_log --log_offset}): a block that fails verification must not
 * be one of them.
 */
final class FioVerifiedRun {

    /** The part of the volume fio writes; probes write beyond it. */
    static final String SIZE = "64m";
    private static final Pattern ISSUED = Pattern.compile("issued rwts: total=(\\d+),(\\d+)");
    private static final Pattern VERIFY_OFFSET = Pattern.compile("at file \\S+ offset (\\d+),");

    private final Path aux;
    private final int seed;
    /** fio's options naming the range it writes. */
    private final List<String> range;
    private final Process process;
    private final long startedAt = System.nanoTime();
    private boolean stopped;
    private boolean completed;

    private FioVerifiedRun(String uri, Path aux, int seed, List<String> range) throws IOException {
        this.aux = aux;
        this.seed = seed;
        this.range = range;
        List<String> cmd = command(uri, "--do_verify=1", "--verify_backlog=256", "--verify_state_save=1",
                "--write_lat_log=" + aux.resolve("lat"), "--log_offset=1");
        this.process = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(aux.resolve("fio.out").toFile())
                .start();
    }

    /** Starts writing to {@code uri}; {@code aux} is a new directory of this run, {@code seed} its random offsets. */
    static FioVerifiedRun start(String uri, Path aux, int seed) throws IOException {
        return new FioVerifiedRun(uri, aux, seed, List.of("--size=" + SIZE));
    }

    /** As {@link #start(String, Path, int)}, writing only {@code sizeMiB} from {@code offsetMiB} on. */
    static FioVerifiedRun start(String uri, Path aux, int seed, int offsetMiB, int sizeMiB) throws IOException {
        return new FioVerifiedRun(uri, aux, seed, List.of("--offset=" + offsetMiB + "m", "--size=" + sizeMiB + "m"));
    }

    /** Waits for a run that was not disturbed to end, and answers fio's exit status. */
    int awaitExit() throws InterruptedException {
        int status = process.waitFor();
        completed = status == 0;
        return status;
    }

    /** Whether fio ended by itself with success ({@link #awaitExit}): every write it issued was acknowledged. */
    boolean completed() {
        return completed;
    }

    /** Milliseconds since fio was started (the time base of its logs, to within its start-up). */
    long elapsedMillis() {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedAt);
    }

    /**
     * Waits up to {@code patience} for fio to end after its server died; a fio still running then
     * is stopped (SIGTERM to it and its job processes, SIGKILL after 30 s) and reported. Answers
     * whether it had to be stopped. fio 3.33 paced by its own {@code --rate_iops} did so in up to
     * three rounds of ten: waiting for its in-flight writes before a pause, it polls a dead
     * connection for ever (its nbd engine returns the poll's error without retiring the commands
     * libnbd aborted), printing without end; the volume's cap paces it instead.
     */
    boolean awaitEnd(Duration patience) throws InterruptedException, IOException {
        if (process.waitFor(patience.toMillis(), TimeUnit.MILLISECONDS)) {
            return false;
        }
        stopped = true;
        List<ProcessHandle> jobs = process.descendants().toList(); // fio runs each job in a child process
        jobs.forEach(ProcessHandle::destroy);
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            stop();
        }
        jobs.forEach(ProcessHandle::destroyForcibly); // a job that ignored SIGTERM would spin on a core
        System.out.printf("fio did not exit within %s of the kill; stopped; it printed %d bytes, beginning:%n%s%n", patience,
                Files.size(aux.resolve("fio.out")), head(aux.resolve("fio.out"), 2000));
        return true;
    }

    /** Kills fio and its job processes (a job left behind spins on a core). */
    void stop() throws InterruptedException {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        process.waitFor();
    }

    /** What fio printed: all of it, or its first and last 64 KiB when it is larger (its summary is at its end). */
    String output() throws IOException {
        Path file = aux.resolve("fio.out");
        long size = Files.size(file);
        int part = 64 << 10;
        if (size <= 2L * part) {
            return Files.readString(file);
        }
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "r")) {
            byte[] tail = new byte[part];
            f.seek(size - part);
            f.readFully(tail);
            return head(file, part) + "\n...\n" + new String(tail, StandardCharsets.UTF_8);
        }
    }

    /** fio's own error line ("fio: ..."), or "ended". */
    String ending() throws IOException {
        return output().lines().filter(l -> l.startsWith("fio:")).findFirst().orElse("ended");
    }

    /** Writes fio issued. */
    long issued() throws IOException {
        return count(output(), 2);
    }

    /**
     * The writes fio saw acknowledged, each as its offset and the time (ms after fio's start) of its
     * completion; empty when fio was stopped before it wrote its completion log.
     */
    List<long[]> acknowledged() throws IOException {
        Path log = aux.resolve("lat_clat.1.log");
        if (!Files.exists(log)) {
            return List.of();
        }
        return Files.readAllLines(log).stream().map(line -> line.split(",\\s*")) // time, latency, direction, size, offset, …
                .filter(f -> f.length >= 5 && f[2].equals("1"))
                .map(f -> new long[] {Long.parseLong(f[4]), Long.parseLong(f[0])}).toList();
    }

    /** Whether this run can be verified: a fio that had to be stopped wrote neither its completion log nor its verify state. */
    boolean verifiable() {
        return !stopped && Files.exists(aux.resolve("lat_clat.1.log"));
    }

    /** What verifying a run against the volume's new server found. */
    record Verification(Set<Long> acknowledged, List<Long> bad, List<Long> lost, long verified, String output) {
    }

    /** Has fio read back, from {@code uri}, every write of this run it had issued but those in flight at the end. */
    Verification verifyOn(String uri) throws IOException, InterruptedException {
        Set<Long> acknowledged = new HashSet<>();
        acknowledged().forEach(w -> acknowledged.add(w[0]));
        List<String> cmd = command(uri, "--verify_only", "--verify_state_load=1", "--continue_on_error=verify",
                "--verify_fatal=0");
        String out = Programs.run(60, cmd.toArray(String[]::new)).output();
        List<Long> bad = out.lines().filter(l -> l.startsWith("verify:")).map(FioVerifiedRun::offsetOf).toList();
        return new Verification(acknowledged, bad, bad.stream().filter(acknowledged::contains).toList(),
                count(out, 1) - bad.size(), out);
    }

    private List<String> command(String uri, String... extra) {
        List<String> cmd = Programs.list("fio", "--name=repl", "--ioengine=nbd", "--uri=" + uri, "--rw=randwrite", "--bs=4k", "--iodepth=32",
                "--verify=crc32c", "--randrepeat=1", "--randseed=" + (seed + 1), "--aux-path=" + aux);
        cmd.addAll(range);
        cmd.addAll(List.of(extra));
        return cmd;
    }

    /** The first {@code max} bytes of a file, as text. */
    private static String head(Path file, int max) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            return new String(in.readNBytes(max), StandardCharsets.UTF_8);
        }
    }

    /** The offset of a fio "verify: bad ..." line. */
    private static long offsetOf(String verifyLine) {
        Matcher m = VERIFY_OFFSET.matcher(verifyLine);
        assertThat(m.find()).as(verifyLine).isTrue();
        return Long.parseLong(m.group(1));
    }

    /** The {@code which}-th total of fio's "issued rwts" line (1: reads, 2: writes), 0 if none. */
    private static long count(String fioOutput, int which) {
        Matcher m = ISSUED.matcher(fioOutput);
        return m.find() ? Long.parseLong(m.group(which)) : 0;
    }
}
