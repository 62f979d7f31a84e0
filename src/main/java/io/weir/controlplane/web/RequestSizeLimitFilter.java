package io.weir.controlplane.web;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Component;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Refuses request bodies larger than {@code weir.web.max-request-bytes} with 413, before any of
 * the body is read. Bodies without a declared length (chunked) are refused as well once they run
 * past the limit, by {@link LimitedBodyRequest}.
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE + 10)
class RequestSizeLimitFilter extends OncePerRequestFilter {

    private final long maxBytes;

    RequestSizeLimitFilter(@Value("${weir.web.max-request-bytes:1048576}") long maxBytes) {
        this.maxBytes = maxBytes;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        long length = request.getContentLengthLong();
        if (length > maxBytes) {
            Problems.write(response, HttpStatus.CONTENT_TOO_LARGE, "Request body too large",
                    "The request body has " + length + " bytes; at most " + maxBytes + " are accepted");
            return;
        }
        try {
            chain.doFilter(length < 0 ? new LimitedBodyRequest(request, maxBytes) : request, response);
        } catch (ServletException | RuntimeException e) {
            if (LimitedBodyRequest.isLimitExceeded(e) && !response.isCommitted()) {
                response.reset();
                Problems.write(response, HttpStatus.CONTENT_TOO_LARGE, "Request body too large",
                        "The request body is longer than the " + maxBytes + " bytes accepted");
                return;
            }
            throw e;
        }
    }
}
