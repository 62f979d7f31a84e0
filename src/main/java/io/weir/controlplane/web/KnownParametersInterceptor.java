package io.weir.controlplane.web;

import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.enums.ParameterIn;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.MethodParameter;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerInterceptor;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * Refuses a query parameter the API endpoint does not take, with a 400 that names it and lists
 * the ones it takes: most often a misspelt filter ({@code ?nodeid=} for {@code nodeId}), which
 * Spring ignores, so the request answered as if no filter had been given (every volume listed, or
 * deleted by a script that trusted the filter). Request bodies refuse unknown members the same
 * way. An endpoint takes its {@code @RequestParam}s and the query parameters its
 * {@code @Parameter(in = QUERY)} annotations document (read from the request itself).
 */
@Configuration(proxyBeanMethods = false)
class KnownParametersInterceptor implements HandlerInterceptor, WebMvcConfigurer {

    /** The parameters each endpoint takes, by its method; holding {@code *} for one that takes any (a {@code @RequestParam Map}). */
    private final Map<Method, Set<String>> taken = new ConcurrentHashMap<>();

    @Override
    public void addInterceptors(InterceptorRegistry registry) {
        registry.addInterceptor(this).addPathPatterns("/api/**");
    }

    @Override
    public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler) {
        if (!(handler instanceof HandlerMethod method) || request.getQueryString() == null) {
            return true;
        }
        Set<String> known = taken.computeIfAbsent(method.getMethod(), m -> parametersOf(method));
        if (known.contains("*")) {
            return true;
        }
        for (String name : request.getParameterMap().keySet()) {
            if (!known.contains(name)) {
                throw new RequestValidationException(name, "this endpoint does not take it; it takes "
                        + (known.isEmpty() ? "no query parameter" : String.join(", ", known)));
            }
        }
        return true;
    }

    private static Set<String> parametersOf(HandlerMethod method) {
        Set<String> names = new TreeSet<>();
        for (MethodParameter p : method.getMethodParameters()) {
            RequestParam param = p.getParameterAnnotation(RequestParam.class);
            if (param == null) {
                continue;
            }
            if (Map.class.isAssignableFrom(p.getParameterType())) {
                names.add("*");
            }
            String name = !param.name().isEmpty() ? param.name() : p.getParameterName();
            if (name != null) {
                names.add(name);
            }
        }
        for (Parameter doc : method.getMethod().getAnnotationsByType(Parameter.class)) {
            if (doc.in() == ParameterIn.QUERY && !doc.name().isEmpty()) {
                names.add(doc.name());
            }
        }
        return names;
    }
}
