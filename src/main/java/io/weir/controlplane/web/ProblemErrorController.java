package io.weir.controlplane.web;

import io.swagger.v3.oas.annotations.Hidden;
import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.boot.webmvc.error.ErrorController;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The container's error page ({@code /error}), in place of Spring Boot's, which answers JSON of
 * its own shape (and 500 with status 999 when {@code /error} is asked for directly). Errors
 * that reach it were raised outside Spring MVC's exception handling: {@code sendError} from the
 * servlet container (such as 405 for {@code TRACE}) or from a filter. Each becomes a problem
 * with the status the container chose, written whatever the client's {@code Accept} says.
 *
 * <p>Asked for directly (any method), {@code /error} is a client's mistake, not a missing
 * resource: 400, saying that the path only reports the errors of other requests.
 */
@RestController
@Hidden
class ProblemErrorController implements ErrorController {

    @RequestMapping("${server.error.path:/error}")
    void error(HttpServletRequest request, HttpServletResponse response) throws IOException {
        Object code = request.getAttribute(RequestDispatcher.ERROR_STATUS_CODE);
        HttpStatus status = code instanceof Integer i ? HttpStatus.resolve(i) : null;
        if (status == null || !status.isError()) {
            status = code == null ? HttpStatus.BAD_REQUEST : HttpStatus.INTERNAL_SERVER_ERROR;
        }
        if (response.isCommitted()) {
            return;
        }
        response.resetBuffer();
        Object uri = request.getAttribute(RequestDispatcher.ERROR_REQUEST_URI);
        org.springframework.http.ProblemDetail problem = org.springframework.http.ProblemDetail.forStatusAndDetail(
                status, detail(status, request, code == null));
        problem.setTitle(status.getReasonPhrase());
        problem.setInstance(Problems.instance(uri instanceof String s ? s : request.getRequestURI()));
        Problems.write(response, problem);
    }

    private static String detail(HttpStatus status, HttpServletRequest request, boolean direct) {
        if (direct) {
            return Problems.bounded(request.getRequestURI()) + " is not a resource: it reports the errors of other requests";
        }
        Object method = request.getAttribute("jakarta.servlet.error.method");
        return switch (status) {
            case METHOD_NOT_ALLOWED -> "This method is not allowed here"
                    + (method == null ? "" : ": " + Problems.bounded(String.valueOf(method)));
            case NOT_FOUND -> "No resource at this path";
            case BAD_REQUEST -> "The request is malformed (path, header or query string)";
            case NOT_ACCEPTABLE -> "No representation matches the Accept header";
            default -> status.is5xxServerError() ? "An internal error occurred; it has been logged"
                    : status.getReasonPhrase();
        };
    }
}
