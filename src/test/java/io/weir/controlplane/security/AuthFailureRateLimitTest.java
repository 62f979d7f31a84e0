package io.weir.controlplane.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.support.HttpApi;
import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** More than 10 failed authentications a minute from one address answer 429 until the minute is over. */
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
