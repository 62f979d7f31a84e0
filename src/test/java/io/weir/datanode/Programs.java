package io.weir.datanode;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs an external program to completion with a timeout and returns its output (stdout and stderr). */
final class Programs {

    record Result(int exitCode, String output) {
    }

    private Programs() {
    }

    static Result run(long timeoutSeconds, String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        byte[][] out = new byte[1][];
        Thread reader = new Thread(() -> {
            try {
                out[0] = p.getInputStream().readAllBytes();
            } catch (IOException e) {
                out[0] = new byte[0];
            }
        });
        reader.start();
        if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            reader.join();
            throw new AssertionError(String.join(" ", command) + " timed out after " + timeoutSeconds + " s:\n"
                    + new String(out[0] == null ? new byte[0] : out[0], StandardCharsets.UTF_8));
        }
        reader.join();
        return new Result(p.exitValue(), new String(out[0], StandardCharsets.UTF_8));
    }

    /** Runs and fails unless the exit code is 0. */
    static String ok(long timeoutSeconds, String... command) throws IOException, InterruptedException {
        Result r = run(timeoutSeconds, command);
        if (r.exitCode() != 0) {
            throw new AssertionError(String.join(" ", command) + " exited " + r.exitCode() + ":\n" + r.output());
        }
        return r.output();
    }

    static List<String> list(String... parts) {
        return new ArrayList<>(List.of(parts));
    }
}
