package io.weir.controlplane.web;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import tools.jackson.databind.json.JsonMapper;

/**
 * Writes a problem+json body straight to a servlet response, for errors raised before Spring MVC
 * is reached (filters, security entry points).
 */
public final class Problems {

    /** Most characters of client input that an error body echoes; longer input is cut. */
    public static final int MAX_ECHO = 200;

    private Problems() {
    }

    /**
     * {@code text} cut to {@link #MAX_ECHO} characters (with "..." and the full length appended),
     * so an error body never grows with what the client sent: a 10,000-character id is not sent
     * back whole.
     */
    public static String bounded(String text) {
        if (text == null || text.length() <= MAX_ECHO) {
            return text;
        }
        int end = MAX_ECHO;
        if (Character.isHighSurrogate(text.charAt(end - 1))) {
            end--;
        }
        return text.substring(0, end) + "... (" + text.length() + " characters)";
    }

    /**
     * Writes the 400 that lists invalid fields, in the shape {@link ProblemDetailsAdvice} gives
     * it: title "Invalid request", {@code errors}, and the one field in {@code detail}.
     */
    public static void writeValidation(HttpServletRequest request, HttpServletResponse response,
            java.util.List<FieldError> errors) throws IOException {
        ProblemDetail problem = validation(errors);
        problem.setInstance(instance(request.getRequestURI()));
        write(response, problem);
    }

    /** Most field errors listed in one problem; {@code detail} says how many there were. */
    public static final int MAX_ERRORS = 100;

    /**
     * A 400 listing {@code errors} (the first {@link #MAX_ERRORS} in field order, {@code detail}
     * counting them all), each echoing at most {@link #MAX_ECHO} characters of input.
     */
    static ProblemDetail validation(java.util.List<FieldError> errors) {
        java.util.List<FieldError> bounded = errors.stream()
                .sorted(java.util.Comparator.comparing(FieldError::field).thenComparing(FieldError::message))
                .limit(MAX_ERRORS)
                .map(e -> new FieldError(bounded(e.field()), bounded(e.message())))
                .toList();
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST,
                errors.size() == 1 ? bounded.get(0).field() + ": " + bounded.get(0).message()
                        : errors.size() > MAX_ERRORS
                                ? errors.size() + " fields are invalid; the first " + MAX_ERRORS + " are listed"
                                : errors.size() + " fields are invalid");
        problem.setTitle("Invalid request");
        problem.setProperty("errors", bounded);
        return problem;
    }

    /**
     * The {@code instance} of a problem about {@code path}: the path, cut to {@link #MAX_ECHO}
     * characters, or null if it is no valid URI reference.
     */
    public static java.net.URI instance(String path) {
        if (path == null) {
            return null;
        }
        String cut = path.length() <= MAX_ECHO ? path : path.substring(0, MAX_ECHO);
        int percent = cut.lastIndexOf('%');
        if (percent >= 0 && percent > cut.length() - 3) {
            cut = cut.substring(0, percent); // no half an escape
        }
        try {
            return new java.net.URI(cut);
        } catch (java.net.URISyntaxException e) {
            return null;
        }
    }

    public static void write(HttpServletResponse response, HttpStatus status, String title, String detail)
            throws IOException {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, detail);
        problem.setTitle(title);
        write(response, problem);
    }

    /** Writes {@code problem} in the same shape Spring MVC gives problems: null members left out. */
    public static void write(HttpServletResponse response, ProblemDetail problem) throws IOException {
        SecurityHeadersFilter.apply(response);
        Map<String, Object> body = new LinkedHashMap<>();
        if (problem.getType() != null && !"about:blank".equals(problem.getType().toString())) {
            body.put("type", problem.getType().toString());
        }
        body.put("title", problem.getTitle());
        body.put("status", problem.getStatus());
        if (problem.getDetail() != null) {
            body.put("detail", problem.getDetail());
        }
        if (problem.getInstance() != null) {
            body.put("instance", problem.getInstance().toString());
        }
        if (problem.getProperties() != null) {
            body.putAll(problem.getProperties());
        }
        response.setStatus(problem.getStatus());
        response.setContentType(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
        response.setCharacterEncoding(StandardCharsets.UTF_8.name());
        response.getOutputStream().write(JsonMapper.shared().writeValueAsBytes(body));
    }
}
