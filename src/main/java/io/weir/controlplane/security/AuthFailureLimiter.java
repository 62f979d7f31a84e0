package io.weir.controlplane.security;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import org.springframework.stereotype.Component;

/**
 * Limits failed authentications per remote address, against online guessing of tokens.
 *
 * <h2>Algorithm</h2>
 * A fixed window per address: the first failure opens a window of
 * {@link SecurityProperties.AuthFailures#window()}; once more than
 * {@link SecurityProperties.AuthFailures#maxPerWindow()} failures fall in it, the address is
 * blocked until the window ends, and every request from it that carries (or needs) credentials
 * answers {@code 429} with {@code Retry-After}. A blocked address cannot test tokens at all,
 * valid ones included, so the block gives a guesser no oracle.
 *
 * <h2>Concurrency and memory</h2>
 * Windows live in a Caffeine cache bounded to {@value #MAX_ADDRESSES} addresses (a flood of
 * addresses evicts the oldest rather than exhausting memory); each window is updated under the
 * cache's per-key compute lock. Time comes from the injected {@link Clock}, so tests control it.
 *
 * <p>Behind a reverse proxy every client shares the proxy's address; configure
 * {@code server.forward-headers-strategy} so the remote address is the client's.
 */
@Component
public class AuthFailureLimiter {

    /** Most addresses tracked at once. */
    static final int MAX_ADDRESSES = 100_000;

    private record Window(Instant start, int failures) {
    }

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
        Window w = windows.getIfPresent(address);
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
        Instant now = clock.instant();
        windows.asMap().compute(address, (a, w) -> w == null || !now.isBefore(w.start().plus(window))
                ? new Window(now, 1)
                : new Window(w.start(), w.failures() + 1));
        return blockedFor(address);
    }

    /** Forgets every failure: for operators after an incident, and for tests. */
    public void reset() {
        windows.invalidateAll();
    }
}
