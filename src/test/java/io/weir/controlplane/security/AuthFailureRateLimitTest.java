package io.weir.controlplane.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.support.HttpApi;
import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/** More than 10 failed authentications a minute from one address answer 429 until the minute is over. */
@ExtendWith(OutputCaptureExtension.class)
class AuthFailureRateLimitTest extends IntegrationTest {

    private static final String BAD = "Bearer weir_" + "0".repeat(32) + "_" + "B".repeat(43);

    private Response badAttempt() {
        return anonymousApi().withHeader("Authorization", BAD).get("/api/v1/tenants");
    }

    @Test
    void eleventhFailureInAMinuteAnswers429WithRetryAfter() {
        for (int i = 0; i < 10; i++) {
            assertThat(badAttempt().status()).as("failure %d", i + 1).isEqualTo(401);
        }
        Response limited = badAttempt();
        assertThat(limited.status()).isEqualTo(429);
        assertThat(limited.contentType()).startsWith("application/problem+json");
        long retryAfter = Long.parseLong(limited.header("Retry-After"));
        assertThat(retryAfter).isBetween(1L, 60L);
    }

    /**
     * Changed behaviour: a valid token used to answer 429 from a blocked address too. The block
     * stops guessing; a valid token is not a guess, and refusing it let anyone who shares (or
     * spoofs) an address lock its legitimate clients out.
     */
    @Test
    void aBlockedAddressStillPassesAValidTokenButNotGuesses() {
        for (int i = 0; i < 11; i++) {
            badAttempt();
        }
        assertThat(api.get("/api/v1/tenants").status()).isEqualTo(200);
        assertThat(badAttempt().status()).isEqualTo(429);
        assertThat(anonymousApi().get("/api/v1/tenants").status()).isEqualTo(429);
        // Public endpoints stay reachable.
        assertThat(anonymousApi().get("/actuator/health/liveness").status()).isEqualTo(200);
    }

    @Test
    void theBlockEndsWithTheWindow() {
        for (int i = 0; i < 11; i++) {
            badAttempt();
        }
        assertThat(badAttempt().status()).isEqualTo(429);
        clock.advance(Duration.ofSeconds(61));
        assertThat(api.get("/api/v1/tenants").status()).isEqualTo(200);
        assertThat(badAttempt().status()).isEqualTo(401);
    }

    @Test
    void failuresAndTheBlockAreLoggedOncePerWindowWithAddressAndTokenIdButNoSecret(CapturedOutput output) {
        int before = occurrences(output.getAll(), "Refused token 00000000-0000-0000-0000-000000000000 from 127.0.0.1");
        int blocksBefore = occurrences(output.getAll(), "Blocked 127.0.0.1 for");
        for (int i = 0; i < 15; i++) {
            badAttempt();
        }
        String log = output.getAll();
        assertThat(occurrences(log, "Refused token 00000000-0000-0000-0000-000000000000 from 127.0.0.1")).isEqualTo(before + 1);
        assertThat(occurrences(log, "Blocked 127.0.0.1 for")).isEqualTo(blocksBefore + 1);
        assertThat(log).doesNotContain("B".repeat(43));
        clock.advance(Duration.ofSeconds(61));
        badAttempt();
        assertThat(occurrences(output.getAll(), "Refused token 00000000-0000-0000-0000-000000000000 from 127.0.0.1"))
                .as("a new window logs again").isEqualTo(before + 2);
    }

    private static int occurrences(String text, String part) {
        int n = 0;
        for (int i = text.indexOf(part); i >= 0; i = text.indexOf(part, i + 1)) {
            n++;
        }
        return n;
    }

    @Test
    void failuresSpreadOverWindowsAreNotLimited() {
        for (int window = 0; window < 3; window++) {
            for (int i = 0; i < 10; i++) {
                assertThat(badAttempt().status()).isEqualTo(401);
            }
            clock.advance(Duration.ofSeconds(61));
        }
    }

    @Test
    void requestsWithoutCredentialsAreNotCountedAsGuesses() {
        HttpApi anonymous = anonymousApi();
        for (int i = 0; i < 20; i++) {
            assertThat(anonymous.get("/api/v1/tenants").status()).isEqualTo(401);
        }
        assertThat(api.get("/api/v1/tenants").status()).isEqualTo(200);
    }
}
