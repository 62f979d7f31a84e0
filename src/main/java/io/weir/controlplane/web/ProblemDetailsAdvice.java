package io.weir.controlplane.web;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.validation.ConstraintViolationException;
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
        return validationProblem(List.of(new FieldError(Problems.bounded(e.getName()), "wrong type: expected " + expected)));
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
        if (isDataException(e)) {
            // SQLSTATE class 22: a value the database cannot hold. Requests are checked before
            // they reach it (text, instants, numbers), so this is a backstop, and the client's.
            log.debug("data exception, answered 400", e);
            ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST,
                    "A value is outside what the service can store (such as a NUL character or an out-of-range date)");
            problem.setTitle("Bad request");
            return problem(problem);
        }
        // Services check names and references first; this is the race between two such checks.
        log.debug("integrity violation", e);
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.CONFLICT,
                "The request conflicts with a concurrent change (duplicate name or missing reference)");
        problem.setTitle("Conflict");
        return problem(problem);
    }

    /** Whether {@code e} was caused by an SQL data exception (SQLSTATE class 22). */
    private static boolean isDataException(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof java.sql.SQLException sql && sql.getSQLState() != null && sql.getSQLState().startsWith("22")) {
                return true;
            }
        }
        return false;
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

    /**
     * 406, written straight to the response: the usual way would negotiate the problem's content
     * type against the same {@code Accept} header, which fails again when the header cannot even
     * be parsed ({@code Accept: garbage}) and left the 406 without a body.
     */
    @Override
    protected ResponseEntity<Object> handleHttpMediaTypeNotAcceptable(
            org.springframework.web.HttpMediaTypeNotAcceptableException ex, HttpHeaders headers, HttpStatusCode status,
            WebRequest request) {
        if (request instanceof org.springframework.web.context.request.ServletWebRequest servlet
                && servlet.getResponse() != null && !servlet.getResponse().isCommitted()) {
            ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.NOT_ACCEPTABLE,
                    ex.getSupportedMediaTypes().isEmpty()
                            ? "The Accept header could not be parsed"
                            : "Acceptable representations: " + ex.getSupportedMediaTypes());
            problem.setTitle("Not Acceptable");
            try {
                Problems.write(servlet.getResponse(), bounded(problem));
                return null;
            } catch (java.io.IOException e) {
                log.debug("could not write a 406", e);
                return null;
            }
        }
        return super.handleHttpMediaTypeNotAcceptable(ex, headers, status, request);
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
        // The outermost Jackson failure: it carries the path (a @JsonCreator's own exception,
        // the most specific cause, does not).
        for (Throwable cause = ex.getCause(); cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            if (cause instanceof JacksonException jackson) {
                return validationProblem(List.of(JsonErrors.toFieldError(jackson)));
            }
        }
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST,
                "The request body is missing or is not readable JSON");
        problem.setTitle("Unreadable request body");
        return problem(problem);
    }

    private static ResponseEntity<Object> validationProblem(List<FieldError> errors) {
        return problem(Problems.validation(errors));
    }

    private static ResponseEntity<Object> problem(ProblemDetail problem) {
        return ResponseEntity.status(problem.getStatus())
                .contentType(org.springframework.http.MediaType.APPLICATION_PROBLEM_JSON)
                .body(bounded(problem));
    }

    /**
     * Spring MVC's own problems (404 for an unknown path, 405, 406, ...) with the same bounds as
     * Weir's: their detail can quote the path or a header.
     */
    @Override
    protected ResponseEntity<Object> createResponseEntity(Object body, HttpHeaders headers, HttpStatusCode statusCode,
            WebRequest request) {
        if (body instanceof ProblemDetail problem) {
            bounded(problem);
        }
        return super.createResponseEntity(body, headers, statusCode, request);
    }

    /**
     * {@code problem} with its detail cut to {@link Problems#MAX_ECHO} characters and its
     * instance set to the (equally cut) request path, so no error body echoes unbounded input.
     */
    private static ProblemDetail bounded(ProblemDetail problem) {
        problem.setDetail(Problems.bounded(problem.getDetail()));
        if (problem.getInstance() == null
                && org.springframework.web.context.request.RequestContextHolder.getRequestAttributes()
                        instanceof org.springframework.web.context.request.ServletRequestAttributes attributes) {
            java.net.URI instance = Problems.instance(attributes.getRequest().getRequestURI());
            problem.setInstance(instance != null ? instance : java.net.URI.create("/"));
        }
        return problem;
    }
}
