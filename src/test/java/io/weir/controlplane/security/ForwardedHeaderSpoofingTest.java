package io.weir.controlplane.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.TestPropertySource;

/**
 * On Kubernetes Spring Boot would trust {@code X-Forwarded-For} from any private address (the
 * tests connect from 127.0.0.1, one of them), so a client could pick the address that the
 * failed-authentication limiter counts. With {@code server.forward-headers-strategy: none} it
 * cannot: spoofing neither escapes a block nor blocks somebody else.
 */
@TestPropertySource(properties = "spring.main.cloud-platform=kubernetes")
class ForwardedHeaderSpoofingTest extends IntegrationTest {

    private static final String BAD = "Bearer weir_" + "0".repeat(32) + "_" + "C".repeat(43);

    @Autowired
    private AuthFailureLimiter limiter;

    private Response badAttemptClaiming(String forwardedFor) {
        return anonymousApi().withHeader("Authorization", BAD).withHeader("X-Forwarded-For", forwardedFor)
                .get("/api/v1/tenants");
    }

    @Test
    void aFreshForwardedForPerAttemptDoesNotEscapeTheBlock() {
        for (int i = 0; i < 10; i++) {
            assertThat(badAttemptClaiming("203.0.113." + i).status()).isEqualTo(401);
        }
        assertThat(badAttemptClaiming("203.0.113.200").status()).isEqualTo(429);
        assertThat(limiter.blockedFor("127.0.0.1")).isPositive();
    }

    @Test
    void aForwardedForNamingAVictimDoesNotBlockTheVictim() {
        for (int i = 0; i < 11; i++) {
            badAttemptClaiming("10.9.8.7");
        }
        assertThat(limiter.blockedFor("10.9.8.7")).isZero();
        assertThat(limiter.blockedFor("127.0.0.1")).isPositive();
    }
}
