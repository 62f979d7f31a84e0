package io.weir.controlplane.security;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * Limits failed authentications per remote address, against online guessing of tokens.
 *
 * <h2>Algorithm</h2>
 * A fixed window per address: the first failure opens a window of
 * {@link SecurityProperties.AuthFailures#window()}; once more than
 * {@link SecurityProperties.AuthFailures#maxPerWindow()} failures fall in it, the address is
 * blocked until the window ends: every request from it that carries wrong (or no) credentials
 * answers {@code 429} with {@code Retry-After}, and further guesses are not even told apart from
 * the block. A request with a valid token still passes: the block exists to stop guessing, and
 * a valid token (256 random bits, or at least 32 chosen characters) is not a guess, so an
 * attacker who makes an address fail cannot lock out the legitimate clients behind it.
 *
 * <h2>Addresses</h2>
 * IPv4 clients are tracked per address, IPv6 clients per {@code /64} (one host usually owns a
 * whole /64, so per-address tracking would give it 2^64 fresh budgets).
 *
 * <h2>Concurrency and memory</h2>
 * Windows live in a Caffeine cache bounded to {@value #MAX_ADDRESSES} addresses (a flood of
 * addresses evicts the oldest rather than exhausting memory); each window is updated under the
 * cache's per-key compute lock. Time comes from the injected {@link Clock}, so tests control it.
 *
 * <p>The address is {@code request.getRemoteAddr()}, the TCP peer: {@code application.yml} sets
 * {@code server.forward-headers-strategy: none}, so a client cannot pick its address with
 * {@code X-Forwarded-For}. Behind a real ingress every client would share the proxy's address;
 * enable forwarded headers for exactly that proxy (see docs/operations.md, "Behind a reverse proxy or ingress").
 */
@Component
public class AuthFailureLimiter {

    /** Most addresses tracked at once. */
    static final int MAX_ADDRESSES = 100_000;

    private record Window(Instant start, int failures) {
    }

    private static final Logger log = LoggerFactory.getLogger(AuthFailureLimiter.class);

    private final Cache<String, Window> windows;
    private final Clock clock;
    private final int maxPerWindow;
    private final Duration window;

    AuthFailureLimiter(Clock clock, SecurityProperties properties) {
        this.clock = clock;
        this.maxPerWindow = properties.authFailures().maxPerWindow();
        this.window = properties.authFailures().window();
        this.windows = Caffeine.newBuilder()
                .maximumSize(MAX_ADDRESSES)
                .expireAfterWrite(window.multipliedBy(2))
                .build();
    }

    /**
     * How long {@code address} is still blocked.
     *
     * @return zero when it is not blocked
     */
    public Duration blockedFor(String address) {
        Window w = windows.getIfPresent(key(address));
        Instant now = clock.instant();
        if (w == null || w.failures() <= maxPerWindow) {
            return Duration.ZERO;
        }
        Duration left = Duration.between(now, w.start().plus(window));
        return left.isNegative() || left.isZero() ? Duration.ZERO : left;
    }

    /**
     * Counts one failure of {@code address}.
     *
     * @return how long the address is now blocked; zero if it is not
     */
    public Duration recordFailure(String address) {
        return recordFailure(address, "a malformed credential");
    }

    /**
     * Counts one failure of {@code address} and logs it at WARN: the first failure of an address
     * in a window, and the failure that blocks it. The log lines themselves are limited so, at
     * most two per address per window, and a guesser cannot flood the log.
     *
     * @param credential what was presented, safe to log: a token id, "a JWT", never a secret
     * @return how long the address is now blocked; zero if it is not
     */
    Duration recordFailure(String address, String credential) {
        Instant now = clock.instant();
        Window w = windows.asMap().compute(key(address), (a, old) -> old == null || !now.isBefore(old.start().plus(window))
                ? new Window(now, 1)
                : new Window(old.start(), old.failures() + 1));
        if (w.failures() == 1) {
            log.warn("Refused {} from {} (further failures from this address are not logged for {})", credential,
                    address, window);
        } else if (w.failures() == maxPerWindow + 1) {
            log.warn("Blocked {} for {} after {} failed authentications (the last: {}); its requests answer 429",
                    key(address), Duration.between(now, w.start().plus(window)), w.failures(), credential);
        }
        return blockedFor(address);
    }

    /**
     * What failures are counted under: an IPv4 address itself, the {@code /64} prefix of an IPv6
     * one (as {@code 2001:db8:1:2::/64}). {@code address} is a literal from the servlet container,
     * so parsing it never resolves a name; anything unparsable is its own key.
     */
    static String key(String address) {
        if (address == null || address.indexOf(':') < 0) {
            return address;
        }
        try {
            InetAddress parsed = InetAddress.getByName(address.startsWith("[") ? address.substring(1, address.length() - 1) : address);
            if (parsed instanceof Inet6Address v6) {
                byte[] b = v6.getAddress();
                StringBuilder prefix = new StringBuilder();
                for (int i = 0; i < 8; i += 2) {
                    prefix.append(Integer.toHexString(((b[i] & 0xff) << 8) | (b[i + 1] & 0xff))).append(':');
                }
                return prefix.append(":/64").toString();
            }
            return parsed.getHostAddress(); // an IPv4-mapped IPv6 address
        } catch (UnknownHostException e) {
            return address;
        }
    }

    /** Forgets every failure: for operators after an incident, and for tests. */
    public void reset() {
        windows.invalidateAll();
    }
}
