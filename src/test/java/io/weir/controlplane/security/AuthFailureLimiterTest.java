package io.weir.controlplane.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.support.MutableClock;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The limiter's addresses: IPv4 per address, IPv6 per /64. */
class AuthFailureLimiterTest {

    private final AuthFailureLimiter limiter = new AuthFailureLimiter(new MutableClock(),
            new SecurityProperties(null, null, new SecurityProperties.AuthFailures(10, Duration.ofMinutes(1))));

    @Test
    void ipv6FailuresCountPerSlash64() {
        for (int i = 1; i <= 11; i++) {
            limiter.recordFailure("2001:db8:1:2::" + Integer.toHexString(i));
        }
        assertThat(limiter.blockedFor("2001:db8:1:2:ffff:ffff:ffff:ffff")).isPositive();
        assertThat(limiter.blockedFor("0:0:0:0:0:0:0:1")).isZero();
        assertThat(limiter.blockedFor("2001:db8:1:3::1")).isZero();
    }

    @Test
    void ipv4FailuresCountPerAddress() {
        for (int i = 0; i < 11; i++) {
            limiter.recordFailure("192.0.2.1");
        }
        assertThat(limiter.blockedFor("192.0.2.1")).isPositive();
        assertThat(limiter.blockedFor("192.0.2.2")).isZero();
        assertThat(AuthFailureLimiter.key("::ffff:192.0.2.1")).isEqualTo("192.0.2.1");
    }
}
