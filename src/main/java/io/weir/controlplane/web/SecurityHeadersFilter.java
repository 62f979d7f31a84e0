package io.weir.controlplane.web;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Sets the browser security headers on every response, the dashboard's, the API's and the
 * errors' alike (problem responses written by {@link Problems} set them again, since a filter
 * that resets the response drops them):
 * <ul>
 *   <li>{@code Content-Security-Policy}: scripts, styles, fonts and fetches from this origin only,
 *       no inline script or style, images also as {@code data:} (Swagger UI's icons), no plugins,
 *       no framing, no {@code <base>};</li>
 *   <li>{@code Referrer-Policy: no-referrer}: no URL of the dashboard or API leaves in a
 *       {@code Referer};</li>
 *   <li>{@code Permissions-Policy}: no camera, microphone, geolocation, payment, USB or
 *       interest cohort.</li>
 * </ul>
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE)
class SecurityHeadersFilter extends OncePerRequestFilter {

    static final String CONTENT_SECURITY_POLICY = "default-src 'self'; script-src 'self'; style-src 'self'; "
            + "img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; "
            + "frame-ancestors 'none'; form-action 'self'";

    static final String PERMISSIONS_POLICY = "camera=(), microphone=(), geolocation=(), payment=(), usb=(), "
            + "interest-cohort=()";

    /** Sets the headers on {@code response}. */
    static void apply(HttpServletResponse response) {
        response.setHeader("Content-Security-Policy", CONTENT_SECURITY_POLICY);
        response.setHeader("Referrer-Policy", "no-referrer");
        response.setHeader("Permissions-Policy", PERMISSIONS_POLICY);
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        apply(response);
        chain.doFilter(request, response);
    }

    @Override
    protected boolean shouldNotFilterErrorDispatch() {
        return false;
    }
}
