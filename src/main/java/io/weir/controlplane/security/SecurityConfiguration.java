package io.weir.controlplane.security;

import io.swagger.v3.oas.models.Components;
import io.swagger.v3.oas.models.security.SecurityRequirement;
import io.swagger.v3.oas.models.security.SecurityScheme;
import jakarta.servlet.DispatcherType;
import java.time.Clock;
import org.springdoc.core.customizers.OpenApiCustomizer;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.convert.converter.Converter;
import org.springframework.http.HttpMethod;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.annotation.web.configurers.AbstractHttpConfigurer;
import org.springframework.security.config.http.SessionCreationPolicy;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.security.web.authentication.AnonymousAuthenticationFilter;

/**
 * Who may call what: one stateless filter chain for the whole service.
 *
 * <h2>Rules</h2>
 * The rules below check the caller's role against the endpoint. Bindings (a tenant-admin's
 * tenant, a node token's node) are checked by the controllers through {@link AccessScope},
 * because only they know which tenant a resource belongs to; they answer 404 for anything of
 * another tenant or node.
 *
 * <table>
 *   <caption>Roles per endpoint (CLUSTER_READ = admin or viewer bound to no tenant)</caption>
 *   <tr><th>endpoints</th><th>who</th></tr>
 *   <tr><td>health, OpenAPI spec, Swagger UI</td><td>anyone</td></tr>
 *   <tr><td>{@code GET} the dashboard's static files ({@code /}, {@code /dashboard/**}, {@code /webjars/**});
 *       the page itself signs in with a token and calls the API with it</td><td>anyone</td></tr>
 *   <tr><td>{@code /actuator/prometheus}</td><td>CLUSTER_READ</td></tr>
 *   <tr><td>{@code GET /agent/connect}</td><td>node</td></tr>
 *   <tr><td>{@code GET /nodes/{id}/desired-config}</td><td>CLUSTER_READ, node (own node)</td></tr>
 *   <tr><td>{@code /tokens/**}</td><td>admin</td></tr>
 *   <tr><td>{@code GET /audit}</td><td>admin, tenant-admin (own tenant's entries)</td></tr>
 *   <tr><td>{@code GET} nodes, task shares, node usage</td><td>CLUSTER_READ</td></tr>
 *   <tr><td>other {@code GET /api/v1/**}</td><td>admin, tenant-admin, viewer (bound ones narrowed)</td></tr>
 *   <tr><td>volume writes; {@code PUT/PATCH/DELETE /tenants/{id}}</td><td>admin, tenant-admin (own
 *       tenant: 403 for tenant writes; other tenants: 404)</td></tr>
 *   <tr><td>{@code POST /tenants/{id}/client-certificates}, {@code DELETE .../client-certificates/{certId}}</td>
 *       <td>admin, tenant-admin (own tenant; other tenants: 404)</td></tr>
 *   <tr><td>everything else</td><td>admin</td></tr>
 * </table>
 *
 * <p>Requests the firewall rejects are answered by {@link ProblemResponses} too (it is the
 * {@code RequestRejectedHandler} bean): problem+json, 401 when the bad header is the credential.
 *
 * <p>CSRF protection is off: the API takes no cookies, only bearer tokens, which a browser never
 * attaches by itself. No session is created.
 */
@Configuration(proxyBeanMethods = false)
class SecurityConfiguration {

    private static final String ADMIN = "ADMIN";
    private static final String TENANT_ADMIN = "TENANT_ADMIN";
    private static final String VIEWER = "VIEWER";
    private static final String NODE = "NODE";
    private static final String CLUSTER_READ = WeirAuthentication.CLUSTER_READ;

    /** The name of the bearer scheme in the OpenAPI document. */
    static final String OPENAPI_SCHEME = "bearerToken";

    @Bean
    ProblemResponses securityProblemResponses(AuthFailureLimiter limiter) {
        return new ProblemResponses(limiter);
    }

    @Bean
    SecurityFilterChain apiSecurity(HttpSecurity http, BearerTokens tokens, AuthFailureLimiter limiter,
            SecurityProperties properties, Clock clock, ProblemResponses problems) throws Exception {
        OidcAuthenticator oidc = properties.oidc().enabled() ? new OidcAuthenticator(properties.oidc(), clock) : null;
        http.csrf(AbstractHttpConfigurer::disable)
                .cors(AbstractHttpConfigurer::disable)
                .httpBasic(AbstractHttpConfigurer::disable)
                .formLogin(AbstractHttpConfigurer::disable)
                .logout(AbstractHttpConfigurer::disable)
                .requestCache(AbstractHttpConfigurer::disable)
                .sessionManagement(s -> s.sessionCreationPolicy(SessionCreationPolicy.STATELESS))
                .exceptionHandling(e -> e.authenticationEntryPoint(problems).accessDeniedHandler(problems))
                .addFilterBefore(new BearerTokenFilter(tokens, oidc, limiter), AnonymousAuthenticationFilter.class)
                .authorizeHttpRequests(a -> a
                        .dispatcherTypeMatchers(DispatcherType.ERROR).permitAll()
                        .requestMatchers("/actuator/health", "/actuator/health/**").permitAll()
                        .requestMatchers("/actuator/prometheus").hasAuthority(CLUSTER_READ)
                        .requestMatchers("/v3/api-docs", "/v3/api-docs/**", "/swagger-ui.html", "/swagger-ui/**").permitAll()
                        .requestMatchers(HttpMethod.GET, "/", "/index.html", "/dashboard/**", "/webjars/**", "/favicon.ico").permitAll()
                        .requestMatchers(HttpMethod.GET, "/api/v1/agent/connect").hasRole(NODE)
                        .requestMatchers(HttpMethod.GET, "/api/v1/nodes/*/desired-config").hasAnyAuthority(CLUSTER_READ, "ROLE_" + NODE)
                        .requestMatchers("/api/v1/tokens", "/api/v1/tokens/**").hasRole(ADMIN)
                        .requestMatchers(HttpMethod.GET, "/api/v1/audit").hasAnyRole(ADMIN, TENANT_ADMIN)
                        .requestMatchers(HttpMethod.GET, "/api/v1/nodes", "/api/v1/nodes/**", "/api/v1/task-shares",
                                "/api/v1/usage/nodes/**").hasAuthority(CLUSTER_READ)
                        .requestMatchers(HttpMethod.GET, "/api/v1/**").hasAnyRole(ADMIN, TENANT_ADMIN, VIEWER)
                        .requestMatchers(HttpMethod.POST, "/api/v1/tenants/*/volumes", "/api/v1/tenants/*/client-certificates")
                                .hasAnyRole(ADMIN, TENANT_ADMIN)
                        .requestMatchers(HttpMethod.DELETE, "/api/v1/tenants/*/client-certificates/*").hasAnyRole(ADMIN, TENANT_ADMIN)
                        .requestMatchers(HttpMethod.PUT, "/api/v1/volumes/*", "/api/v1/tenants/*").hasAnyRole(ADMIN, TENANT_ADMIN)
                        .requestMatchers(HttpMethod.PATCH, "/api/v1/volumes/*", "/api/v1/tenants/*").hasAnyRole(ADMIN, TENANT_ADMIN)
                        .requestMatchers(HttpMethod.DELETE, "/api/v1/volumes/*", "/api/v1/tenants/*").hasAnyRole(ADMIN, TENANT_ADMIN)
                        .anyRequest().hasRole(ADMIN));
        return http.build();
    }

    /** The time tokens expire by and audit entries are stamped with; tests replace it. */
    @Bean
    @ConditionalOnMissingBean
    Clock clock() {
        return Clock.systemUTC();
    }

    /** Reads {@code ?role=tenant-admin} and the like by wire name. */
    @Bean
    Converter<String, Role> roleParameterConverter() {
        return new Converter<>() {
            @Override
            public Role convert(String source) {
                return Role.fromWire(source);
            }
        };
    }

    /**
     * Declares the bearer scheme in the OpenAPI document and requires it on every operation, so
     * Swagger UI's "Authorize" button supplies the token to "try it out".
     */
    @Bean
    OpenApiCustomizer bearerSecurityScheme() {
        return openApi -> {
            if (openApi.getComponents() == null) {
                openApi.setComponents(new Components());
            }
            openApi.getComponents().addSecuritySchemes(OPENAPI_SCHEME, new SecurityScheme()
                    .type(SecurityScheme.Type.HTTP)
                    .scheme("bearer")
                    .description("A Weir API token (weir_...) or, when OIDC is configured, a JWT from the issuer."));
            openApi.addSecurityItem(new SecurityRequirement().addList(OPENAPI_SCHEME));
        };
    }
}
