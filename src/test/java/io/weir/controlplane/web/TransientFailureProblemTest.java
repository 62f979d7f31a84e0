package io.weir.controlplane.web;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLTransientConnectionException;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.dao.PessimisticLockingFailureException;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.CannotGetJdbcConnectionException;
import org.springframework.transaction.CannotCreateTransactionException;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.method.annotation.ExceptionHandlerMethodResolver;

/** Lock conflicts, timeouts and an exhausted connection pool answer 503 with Retry-After, never 500. */
class TransientFailureProblemTest {

    private final ProblemDetailsAdvice advice = new ProblemDetailsAdvice();
    private final ExceptionHandlerMethodResolver resolver = new ExceptionHandlerMethodResolver(ProblemDetailsAdvice.class);

    @Test
    void transientDatabaseFailuresAnswer503WithRetryAfter() throws Exception {
        List<Exception> failures = List.of(
                new CannotAcquireLockException("deadlock detected (40P01)"),
                new PessimisticLockingFailureException("lock timeout"),
                new QueryTimeoutException("statement timeout"),
                new CannotGetJdbcConnectionException("pool exhausted",
                        new SQLTransientConnectionException("HikariPool-1 - Connection is not available")),
                new CannotCreateTransactionException("Could not open JPA EntityManager for transaction"));
        for (Exception failure : failures) {
            var handler = new HandlerMethod(advice, resolver.resolveMethodByThrowable(failure));
            @SuppressWarnings("unchecked")
            ResponseEntity<Object> response = (ResponseEntity<Object>) handler.getMethod().invoke(advice, failure);
            assertThat(response.getStatusCode().value()).as(failure.toString()).isEqualTo(503);
            assertThat(response.getHeaders().getFirst(HttpHeaders.RETRY_AFTER)).isEqualTo("1");
            assertThat(((ProblemDetail) response.getBody()).getDetail()).doesNotContain("40P01", "Hikari");
        }
    }
}
