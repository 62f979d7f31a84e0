package io.weir.controlplane.web;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Refuses a query string that is not valid UTF-8 text with a 400 that names the parameter,
 * before anything reads it: a malformed percent-escape, bytes that are not UTF-8
 * ({@code ?name=%FF%FE}), NUL ({@code %00}, which PostgreSQL cannot store or compare) or a
 * lone surrogate. Without this, Tomcat's decoding failure surfaced as a 500 when a controller
 * first asked for a parameter, and a NUL reached the database as a 409.
 *
 * <p>An empty or blank value ({@code ?actor=}, {@code ?tenantId=}, {@code ?label=}, a bare
 * {@code ?actor}) is refused the same way, for every parameter of every endpoint: Spring binds an
 * empty value as if the parameter were absent (a filter dropped, a default page used), so a
 * client whose variable was unexpectedly empty got everything instead of an error.
 *
 * <p>The query string is decoded here byte by byte, as {@code application/x-www-form-urlencoded}
 * (with {@code +} as a space), under the same rules Tomcat then applies; then Tomcat's own
 * parse is run once, so that its limits (such as the number of parameters) answer 400 too.
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE + 20)
class QueryParameterFilter extends OncePerRequestFilter {

    /** The error of an empty or blank value. */
    static final String EMPTY_VALUE = "must not be empty or blank: leave the parameter out to not filter by it";

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        String query = request.getQueryString();
        if (query != null && !query.isEmpty()) {
            FieldError error = check(query);
            if (error == null) {
                error = checkContainerParse(request);
            }
            if (error != null) {
                Problems.writeValidation(request, response, List.of(error));
                return;
            }
        }
        chain.doFilter(request, response);
    }

    /** The first problem of {@code query}, or null if every name and value is valid text. */
    static FieldError check(String query) {
        for (String pair : query.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String rawName = eq < 0 ? pair : pair.substring(0, eq);
            String name = decode(rawName);
            if (name == null) {
                return new FieldError(Problems.bounded(rawName), "the parameter name is not valid percent-encoded UTF-8");
            }
            String nameProblem = StrictText.problem(name);
            if (nameProblem != null) {
                return new FieldError(Problems.bounded(rawName), "the parameter name " + nameProblem);
            }
            String value = eq < 0 ? "" : decode(pair.substring(eq + 1));
            if (value == null) {
                return new FieldError(Problems.bounded(name), "not valid percent-encoded UTF-8");
            }
            if (value.isBlank()) {
                return new FieldError(Problems.bounded(name), EMPTY_VALUE);
            }
            String valueProblem = StrictText.problem(value);
            if (valueProblem != null) {
                return new FieldError(Problems.bounded(name), valueProblem);
            }
        }
        return null;
    }

    /** {@code text} percent-decoded as UTF-8 ({@code +} is a space), or null if it is not valid. */
    static String decode(String text) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(text.length());
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '%') {
                if (i + 2 >= text.length()) {
                    return null;
                }
                int hi = Character.digit(text.charAt(i + 1), 16);
                int lo = Character.digit(text.charAt(i + 2), 16);
                if (hi < 0 || lo < 0) {
                    return null;
                }
                bytes.write(hi << 4 | lo);
                i += 2;
            } else if (c == '+') {
                bytes.write(' ');
            } else if (c < 0x80) {
                bytes.write(c);
            } else {
                // Tomcat hands the query string over as ISO-8859-1 bytes; keep them as bytes.
                bytes.write(c & 0xFF);
            }
        }
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes.toByteArray()))
                    .toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    /**
     * Lets the container parse the parameters now, so that a failure it reports (too many
     * parameters, for one) is a 400 here rather than an exception wherever a parameter is read.
     */
    private static FieldError checkContainerParse(HttpServletRequest request) {
        try {
            request.getParameterMap();
            return null;
        } catch (IllegalStateException e) { // Tomcat's InvalidParameterException
            return new FieldError(FieldError.ROOT, "the query string could not be parsed (too many parameters?)");
        }
    }
}
