package io.weir.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * Runs {@code src/test/browser/dashboard.mjs}: Debian's headless Chromium, driven by the pinned
 * playwright-core (installed with {@code npm ci} on first use), signs in to the dashboard, checks
 * what a user sees, and saves a screenshot under {@code target/}.
 */
public final class DashboardBrowser {

    private static final Path BROWSER = Path.of("src/test/browser");

    private DashboardBrowser() {
    }

    /**
     * Opens the dashboard at {@code baseUrl} and signs in with {@code token} (or, with token
     * {@code "-"}, opens {@code baseUrl} as a link that signs in by itself); {@code expect} is
     * {@code admin} (cluster-wide: nodes and tasks shown) or {@code tenant}. Answers the
     * script's JSON line of what it saw; fails the test on any failed check.
     */
    public static String check(String baseUrl, String token, String screenshot, String expect)
            throws IOException, InterruptedException {
        installPlaywright();
        Path shot = Path.of("target", screenshot).toAbsolutePath();
        Process p = new ProcessBuilder("node", "dashboard.mjs", baseUrl, token, shot.toString(), expect)
                .directory(BROWSER.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(3, TimeUnit.MINUTES)).as("the browser run finished").isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        assertThat(shot).exists();
        return out;
    }

    private static synchronized void installPlaywright() throws IOException, InterruptedException {
        if (Files.isDirectory(BROWSER.resolve("node_modules/playwright-core"))) {
            return;
        }
        Process npm = new ProcessBuilder("npm", "ci", "--no-audit", "--no-fund").directory(BROWSER.toFile())
                .redirectErrorStream(true).start();
        String out = new String(npm.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(npm.waitFor(5, TimeUnit.MINUTES)).as("npm ci finished").isTrue();
        assertThat(npm.exitValue()).as(out).isZero();
    }
}
