package io.weir.controlplane.web;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ErrorReportValve;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import tools.jackson.databind.json.JsonMapper;

/**
 * Tomcat's error report, as problem+json instead of an HTML page. Tomcat writes it for errors
 * it answers itself, before any filter or servlet runs: a path with an encoded {@code /},
 * {@code \}, NUL or {@code ..} segment, a header section larger than
 * {@code server.max-http-request-header-size}, a query string past its limits. Errors the
 * application raises never reach this report with a body unwritten ({@link ProblemErrorController}
 * and the exception handlers write theirs).
 *
 * <p>Installed as the host's error report valve by {@link TomcatProblemConfiguration}. Nothing
 * of the request is echoed.
 */
public class ProblemErrorReportValve extends ErrorReportValve {

    public ProblemErrorReportValve() {
        setShowReport(false);
        setShowServerInfo(false);
    }

    @Override
    protected void report(Request request, Response response, Throwable throwable) {
        int code = response.getStatus();
        if (code < 400 || response.getContentWritten() > 0 || !response.setErrorReported()) {
            return;
        }
        HttpStatus status = HttpStatus.resolve(code);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("title", status != null ? status.getReasonPhrase() : "Error");
        body.put("status", code);
        body.put("detail", switch (code) {
            case 400 -> "The request is malformed: the server does not accept its path, headers or query string "
                    + "(such as an encoded '/', '\\\\', NUL or '..' in the path, or headers or a query string too large)";
            case 404 -> "No resource at this path";
            case 405 -> "This method is not allowed here";
            default -> code >= 500 ? "An internal error occurred" : (status != null ? status.getReasonPhrase() : "Error");
        });
        try {
            byte[] bytes = JsonMapper.shared().writeValueAsBytes(body);
            response.setContentType(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
            response.setCharacterEncoding(StandardCharsets.UTF_8.name());
            response.setContentLength(bytes.length);
            OutputStream out = response.getOutputStream();
            out.write(bytes);
            out.flush();
        } catch (IOException | IllegalStateException e) {
            // The client is gone or the response is unusable; nothing more to report to it.
        }
    }
}
