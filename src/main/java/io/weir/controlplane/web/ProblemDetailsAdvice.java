package io.weir.controlplane.web;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.validation.ConstraintViolationException;
import java.util.Comparator;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.dao.TransientDataAccessException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.orm.ObjectOptimisticLockingFailureException;
import org.springframework.transaction.CannotCreateTransactionException;
import org.springframework.web.bind.MethodArgumentNotValidException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.context.request.WebRequest;
import org.springframework.web.method.annotation.HandlerMethodValidationException;
import org.springframework.web.method.annotation.MethodArgumentTypeMismatchException;
import org.springframework.web.servlet.mvc.method.annotation.ResponseEntityExceptionHandler;
import tools.jackson.core.JacksonException;

/**
 * Answers every error with {@code application/problem+json} (RFC 9457).
 *
 * <p>Spring MVC's own exceptions (404 for unknown paths, 405, 415, 406 and the like) already
 * become problems through {@link ResponseEntityExceptionHandler}; this class adds Weir's
 * exceptions, lists each invalid field under {@code errors}, explains unreadable bodies (unknown
 * field, wrong type, malformed JSON) and makes sure nothing internal, such as a stack trace or an
 * SQL message, reaches the client.
 *
 * <h2>Transient database failures</h2>
 * A lock that could not be taken (a deadlock victim, a lock or statement timeout), a query
 * timeout, or a database connection that could not be had (pool exhausted, database restarting)
 * answers 503 with {@code Retry-After: 1}, never 500: nothing is wrong with the request, and the
 * same request is expected to succeed when retried. 503 rather than 409 because the client cannot
 * resolve it by reading the resource again; it only has to retry. Optimistic-lock conflicts are
 * not transient in that sense and keep their 409/412.
 */
@RestControllerAdvice
class ProblemDetailsAdvice extends ResponseEntityExceptionHandler {

    private static final Logger log = LoggerFactory.getLogger(ProblemDetailsAdvice.class);

    @ExceptionHandler(ApiException.class)
    ResponseEntity<Object> handleApi(ApiException e) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(e.status(), e.getMessage());
        problem.setTitle(e.title());
        e.properties().forEach(problem::setProperty);
        return problem(problem);
    }

    @ExceptionHandler(RequestValidationException.class)
    ResponseEntity<Object> handleValidation(RequestValidationException e) {
        return validationProblem(e.errors());
    }

    @ExceptionHandler(ConstraintViolationException.class)
    ResponseEntity<Object> handleConstraintViolation(ConstraintViolationException e) {
        return validationProblem(e.getConstraintViolations().stream()
                .map(FieldError::of)
                .toList());
    }

    @ExceptionHandler(MethodArgumentTypeMismatchException.class)
    ResponseEntity<Object> handleTypeMismatch(MethodArgumentTypeMismatchException e) {
        // The same words as for a body field of that type ("a UUID string", "an integer").
        String expected = e.getRequiredType() == null ? "a different type" : JsonErrors.describe(e.getRequiredType());
        return validationProblem(List.of(new FieldError(e.getName(), "wrong type: expected " + expected)));
    }

    @ExceptionHandler(ObjectOptimisticLockingFailureException.class)
    ResponseEntity<Object> handleOptimisticLock(ObjectOptimisticLockingFailureException e, HttpServletRequest request) {
        // Two writers raced past the If-Match check; the loser's precondition no longer holds.
        boolean conditional = request.getHeader(HttpHeaders.IF_MATCH) != null;
        HttpStatus status = conditional ? HttpStatus.PRECONDITION_FAILED : HttpStatus.CONFLICT;
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(status,
                "The resource was modified concurrently; read it again and retry");
        problem.setTitle(conditional ? "Precondition failed" : "Conflict");
        return problem(problem);
    }

    @ExceptionHandler({TransientDataAccessException.class, DataAccessResourceFailureException.class,
            CannotCreateTransactionException.class})
    ResponseEntity<Object> handleTransient(Exception e) {
        log.warn("Transient database failure, answered 503: {}", e.toString());
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.SERVICE_UNAVAILABLE,
                "The database is busy (lock conflict, timeout or no free connection); retry the request");
        problem.setTitle("Service unavailable");
        return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE)
                .header(HttpHeaders.RETRY_AFTER, "1")
                .contentType(org.springframework.http.MediaType.APPLICATION_PROBLEM_JSON)
                .body(problem);
    }

    @ExceptionHandler(DataIntegrityViolationException.class)
    ResponseEntity<Object> handleIntegrity(DataIntegrityViolationException e) {
        // Services check names and references first; this is the race between two such checks.
        log.debug("integrity violation", e);
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.CONFLICT,
                "The request conflicts with a concurrent change (duplicate name or missing reference)");
        problem.setTitle("Conflict");
        return problem(problem);
    }

    @ExceptionHandler(Exception.class)
    ResponseEntity<Object> handleUnexpected(Exception e) {
        log.error("Unhandled error", e);
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.INTERNAL_SERVER_ERROR,
                "An internal error occurred; it has been logged");
        problem.setTitle("Internal server error");
        return problem(problem);
    }

    @Override
    protected ResponseEntity<Object> handleMethodArgumentNotValid(MethodArgumentNotValidException ex,
            HttpHeaders headers, HttpStatusCode status, WebRequest request) {
        List<FieldError> errors = ex.getBindingResult().getFieldErrors().stream()
                .map(f -> new FieldError(f.getField(), f.getDefaultMessage()))
                .toList();
        List<FieldError> global = ex.getBindingResult().getGlobalErrors().stream()
                // A class-level constraint belongs to the whole body, not to the Java object's name.
                .map(g -> new FieldError(FieldError.ROOT, g.getDefaultMessage()))
                .toList();
        return validationProblem(java.util.stream.Stream.concat(errors.stream(), global.stream()).toList());
    }

    @Override
    protected ResponseEntity<Object> handleHandlerMethodValidationException(HandlerMethodValidationException ex,
            HttpHeaders headers, HttpStatusCode status, WebRequest request) {
        List<FieldError> errors = ex.getParameterValidationResults().stream()
                .flatMap(r -> r.getResolvableErrors().stream().map(err -> new FieldError(
                        r.getMethodParameter().getParameterName(), err.getDefaultMessage())))
                .toList();
        return validationProblem(errors);
    }

    @Override
    protected ResponseEntity<Object> handleHttpMessageNotReadable(HttpMessageNotReadableException ex,
            HttpHeaders headers, HttpStatusCode status, WebRequest request) {
        if (LimitedBodyRequest.isLimitExceeded(ex)) {
            ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.CONTENT_TOO_LARGE,
                    "The request body is longer than the server accepts");
            problem.setTitle("Request body too large");
            return problem(problem);
        }
        Throwable cause = ex.getMostSpecificCause();
        if (cause instanceof JacksonException jackson) {
            return validationProblem(List.of(JsonErrors.toFieldError(jackson)));
        }
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST,
                "The request body is missing or is not readable JSON");
        problem.setTitle("Unreadable request body");
        return problem(problem);
    }

    private static ResponseEntity<Object> validationProblem(List<FieldError> errors) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST,
                errors.size() == 1 ? errors.get(0).field() + ": " + errors.get(0).message()
                        : errors.size() + " fields are invalid");
        problem.setTitle("Invalid request");
        problem.setProperty("errors", errors.stream()
                .sorted(Comparator.comparing(FieldError::field).thenComparing(FieldError::message))
                .toList());
        return problem(problem);
    }

    private static ResponseEntity<Object> problem(ProblemDetail problem) {
        return ResponseEntity.status(problem.getStatus())
                .contentType(org.springframework.http.MediaType.APPLICATION_PROBLEM_JSON)
                .body(problem);
    }
}
