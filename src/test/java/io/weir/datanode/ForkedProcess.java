package io.weir.datanode;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A program in its own process, started and taken for ready once a line of its output matches a
 * pattern; the rest of its output is drained into {@link #output} for a failing test to show.
 */
final class ForkedProcess {

    final Process process;
    /** The line that made it ready, matched. */
    final Matcher ready;
    /** Everything the process has printed (stdout and stderr) so far. */
    final StringBuffer output = new StringBuffer();

    private ForkedProcess(Process process, Matcher ready) {
        this.process = process;
        this.ready = ready;
    }

    /**
     * Starts {@code command} and reads its output until a line matches {@code ready}; fails, naming
     * it {@code what} and showing its output, if it ends first.
     */
    static ForkedProcess start(String what, List<String> command, Pattern ready) throws IOException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        StringBuilder seen = new StringBuilder();
        String line;
        while ((line = r.readLine()) != null) {
            seen.append(line).append('\n');
            Matcher m = ready.matcher(line);
            if (m.find()) {
                ForkedProcess started = new ForkedProcess(p, m);
                started.output.append(seen);
                Thread drain = new Thread(() -> {
                    try {
                        String more;
                        while ((more = r.readLine()) != null) {
                            started.output.append(more).append('\n');
                        }
                    } catch (IOException ignored) {
                        // process gone
                    }
                }, "forked-output");
                drain.setDaemon(true);
                drain.start();
                return started;
            }
        }
        p.destroyForcibly();
        throw new IOException(what + " did not start:\n" + seen);
    }

    /** SIGKILL: no shutdown hook, no flush. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    /** SIGTERM, then SIGKILL if it has not ended within 30 s. */
    void stop() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            kill();
        }
    }
}
