package io.weir.controlplane.web;

import java.util.Map;
import org.springframework.http.HttpStatus;

/**
 * A failure with a definite HTTP meaning, turned into an RFC 9457 problem by
 * {@link ProblemDetailsAdvice}. Use the factory methods; they fix the status and title so that
 * every feature answers the same way.
 */
public class ApiException extends RuntimeException {

    private final HttpStatus status;
    private final String title;
    private final transient Map<String, Object> properties;

    public ApiException(HttpStatus status, String title, String detail, Map<String, Object> properties) {
        super(detail);
        this.status = status;
        this.title = title;
        this.properties = Map.copyOf(properties);
    }

    /** 404: the resource does not exist (or the caller may not know that it does). */
    public static ApiException notFound(String kind, Object id) {
        return new ApiException(HttpStatus.NOT_FOUND, "Not found", kind + " " + id + " does not exist", Map.of());
    }

    /** 409: the request conflicts with the current state, such as a duplicate name. */
    public static ApiException conflict(String detail) {
        return new ApiException(HttpStatus.CONFLICT, "Conflict", detail, Map.of());
    }

    /** 409 with extra members, such as the names of the resources that block a delete. */
    public static ApiException conflict(String detail, Map<String, Object> properties) {
        return new ApiException(HttpStatus.CONFLICT, "Conflict", detail, properties);
    }

    /** 412: {@code If-Match} named a version that is no longer current. */
    public static ApiException preconditionFailed(String detail) {
        return new ApiException(HttpStatus.PRECONDITION_FAILED, "Precondition failed", detail, Map.of());
    }

    /** 400: the request is well-formed JSON but asks for something impossible. */
    public static ApiException badRequest(String detail) {
        return new ApiException(HttpStatus.BAD_REQUEST, "Bad request", detail, Map.of());
    }

    public HttpStatus status() {
        return status;
    }

    public String title() {
        return title;
    }

    public Map<String, Object> properties() {
        return properties;
    }
}
