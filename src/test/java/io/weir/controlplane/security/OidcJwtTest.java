package io.weir.controlplane.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import com.sun.net.httpserver.HttpServer;
import io.weir.controlplane.support.HttpApi;
import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.HttpURLConnection;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.NoSuchAlgorithmException;
import java.security.interfaces.RSAPrivateKey;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * JWTs from an OIDC issuer are accepted beside Weir tokens when {@code weir.security.oidc.issuer-uri}
 * is set. The issuer is real HTTP: a JDK {@link HttpServer} on 127.0.0.1 serving the discovery
 * document and the JWKS of an RSA key generated for this test.
 */
class OidcJwtTest extends IntegrationTest {

    private static final KeyPair KEY = rsa();
    private static final KeyPair OTHER_KEY = rsa();
    private static final HttpServer ISSUER = startIssuer();
    private static final String ISSUER_URI = "http://127.0.0.1:" + ISSUER.getAddress().getPort();
    private static final AtomicInteger DISCOVERY_REQUESTS = new AtomicInteger();
    /** While true the issuer answers every request with 503, as an identity provider in an outage. */
    private static final AtomicBoolean ISSUER_DOWN = new AtomicBoolean();
    private static final String AUDIENCE = "weir-api";

    @DynamicPropertySource
    static void oidc(DynamicPropertyRegistry registry) {
        registry.add("weir.security.oidc.issuer-uri", () -> ISSUER_URI);
        registry.add("weir.security.oidc.audience", () -> AUDIENCE);
    }

    @AfterEach
    void issuerUp() {
        ISSUER_DOWN.set(false);
    }

    @AfterAll
    static void stopIssuer() {
        ISSUER.stop(0);
    }

    private static KeyPair rsa() {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
            generator.initialize(2048);
            return generator.generateKeyPair();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static HttpServer startIssuer() {
        try {
            HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
            // Both documents are fixed, so they are built once here rather than per request: the
            // service fetches them with 500 ms connect and read timeouts (Spring Security's Nimbus
            // defaults), and building a JWKS cold took ~80 ms on a busy 2-core machine.
            String base = "http://127.0.0.1:" + server.getAddress().getPort();
            String discovery = "{\"issuer\":\"" + base + "\",\"jwks_uri\":\"" + base + "/jwks\","
                    + "\"authorization_endpoint\":\"" + base + "/authorize\",\"token_endpoint\":\"" + base + "/token\","
                    + "\"subject_types_supported\":[\"public\"],\"response_types_supported\":[\"code\"],"
                    + "\"id_token_signing_alg_values_supported\":[\"RS256\"]}";
            String jwks = new JWKSet(new RSAKey.Builder((RSAPublicKey) KEY.getPublic()).keyID("k1").build()).toString();
            server.createContext("/.well-known/openid-configuration", exchange -> {
                DISCOVERY_REQUESTS.incrementAndGet();
                respond(exchange, discovery);
            });
            server.createContext("/jwks", exchange -> respond(exchange, jwks));
            server.start();
            return server;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * One request to the issuer before the tests, so that the service's first fetch (under those
     * 500 ms timeouts) does not also pay for loading and interpreting the JDK HTTP server's code:
     * a real identity provider is warm. It asks for the JWKS, which {@link #DISCOVERY_REQUESTS}
     * does not count. Not in the static initialiser: the handlers are this class's code, so the
     * server thread would wait for the initialisation that waits for it.
     */
    @BeforeAll
    static void warmUpIssuer() throws IOException {
        HttpURLConnection connection = (HttpURLConnection) URI.create(ISSUER_URI + "/jwks").toURL().openConnection();
        connection.setConnectTimeout(30_000);
        connection.setReadTimeout(30_000);
        try (InputStream in = connection.getInputStream()) {
            in.readAllBytes();
        } finally {
            connection.disconnect();
        }
    }

    private static void respond(com.sun.net.httpserver.HttpExchange exchange, String json) throws IOException {
        if (ISSUER_DOWN.get()) {
            exchange.sendResponseHeaders(503, -1);
            exchange.close();
            return;
        }
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().add("Content-Type", "application/json");
        exchange.sendResponseHeaders(200, body.length);
        exchange.getResponseBody().write(body);
        exchange.close();
    }

    private String jwt(KeyPair key, String issuer, Instant expiry, Map<String, Object> claims) {
        return jwt(key, "k1", issuer, expiry, claims);
    }

    /** A JWT of {@code claims} on top of iss, sub, aud, iat and exp; a claim mapped to null is left out. */
    private String jwt(KeyPair key, String keyId, String issuer, Instant expiry, Map<String, Object> claims) {
        JWTClaimsSet.Builder set = new JWTClaimsSet.Builder()
                .issuer(issuer)
                .subject("alice@example.com")
                .audience(AUDIENCE)
                .issueTime(Date.from(clock.instant()))
                .expirationTime(expiry == null ? null : Date.from(expiry));
        claims.forEach(set::claim);
        SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.RS256).keyID(keyId).build(), set.build());
        try {
            jwt.sign(new RSASSASigner((RSAPrivateKey) key.getPrivate()));
        } catch (JOSEException e) {
            throw new IllegalStateException(e);
        }
        return jwt.serialize();
    }

    private String jwt(Map<String, Object> claims) {
        return jwt(KEY, ISSUER_URI, clock.instant().plus(Duration.ofMinutes(5)), claims);
    }

    private UUID tenant() {
        return UUID.fromString(api.post("/api/v1/tenants", "{\"name\":\"" + unique("oidc") + "\"}").json().get("id").asString());
    }

    @Test
    void anAdminJwtMayDoEverythingAndIsTheAuditedActor() {
        HttpApi admin = apiAs(jwt(Map.of("weir_role", "admin")));
        assertThat(admin.get("/api/v1/tokens").status()).isEqualTo(200);
        Response created = admin.post("/api/v1/tenants", "{\"name\":\"" + unique("oidc") + "\"}");
        assertThat(created.status()).isEqualTo(201);
        Response audit = api.get("/api/v1/audit?resourceId=" + created.json().get("id").asString());
        assertThat(audit.json().get("items").get(0).get("actorType").asString()).isEqualTo("jwt");
        assertThat(audit.json().get("items").get(0).get("actor").asString()).isEqualTo("alice@example.com");
        assertThat(DISCOVERY_REQUESTS.get()).isPositive();
    }

    @Test
    void tenantAndRoleComeFromTheClaims() {
        UUID a = tenant();
        UUID b = tenant();
        HttpApi adminOfA = apiAs(jwt(Map.of("weir_role", "tenant-admin", "weir_tenant", a.toString())));
        assertThat(adminOfA.get("/api/v1/tenants/" + a).status()).isEqualTo(200);
        assertThat(adminOfA.get("/api/v1/tenants/" + b).status()).isEqualTo(404);
        assertThat(adminOfA.get("/api/v1/tenants?size=500").json().get("items").findValuesAsString("id"))
                .containsExactly(a.toString());
        HttpApi viewer = apiAs(jwt(Map.of("weir_role", "viewer", "weir_tenant", "*")));
        assertThat(viewer.get("/api/v1/tenants/" + b).status()).isEqualTo(200);
        assertThat(viewer.post("/api/v1/tenants", "{\"name\":\"" + unique("oidc") + "\"}").status()).isEqualTo(403);
    }

    @Test
    void expiredJwtIsRefused() {
        String token = jwt(Map.of("weir_role", "viewer", "weir_tenant", "*"));
        assertThat(apiAs(token).get("/api/v1/tenants").status()).isEqualTo(200);
        clock.advance(Duration.ofMinutes(7)); // past the expiry and the 60 s of allowed skew
        Response refused = apiAs(token).get("/api/v1/tenants");
        assertThat(refused.status()).isEqualTo(401);
        assertThat(refused.contentType()).startsWith("application/problem+json");
    }

    @Test
    void jwtsThatDoNotVerifyOrGrantNoRoleAreRefused() {
        Instant later = clock.instant().plus(Duration.ofMinutes(5));
        assertThat(apiAs(jwt(OTHER_KEY, ISSUER_URI, later, Map.of("weir_role", "admin"))).get("/api/v1/tenants").status())
                .as("signed by another key").isEqualTo(401);
        assertThat(apiAs(jwt(KEY, "http://127.0.0.1:1", later, Map.of("weir_role", "admin"))).get("/api/v1/tenants").status())
                .as("another issuer").isEqualTo(401);
        assertThat(apiAs(jwt(Map.of())).get("/api/v1/tenants").status()).as("no role").isEqualTo(401);
        assertThat(apiAs(jwt(Map.of("weir_role", "root"))).get("/api/v1/tenants").status()).as("unknown role").isEqualTo(401);
        assertThat(apiAs(jwt(Map.of("weir_role", "tenant-admin"))).get("/api/v1/tenants").status())
                .as("tenant-admin without a tenant").isEqualTo(401);
        assertThat(apiAs(jwt(Map.of("weir_role", "node"))).get("/api/v1/tenants").status())
                .as("nodes use Weir tokens").isEqualTo(401);
    }

    @Test
    void aJwtWithoutExpiryIsRefused() {
        assertThat(apiAs(jwt(KEY, ISSUER_URI, null, Map.of("weir_role", "admin"))).get("/api/v1/tenants").status())
                .isEqualTo(401);
    }

    @Test
    void aJwtForAnotherAudienceIsRefused() {
        assertThat(apiAs(jwt(Map.of("weir_role", "admin", "aud", "some-other-app"))).get("/api/v1/tenants").status())
                .isEqualTo(401);
        assertThat(apiAs(jwt(withNull("aud", Map.of("weir_role", "admin")))).get("/api/v1/tenants").status())
                .as("no aud at all").isEqualTo(401);
    }

    @Test
    void aJwtWithoutSubjectIsRefused() {
        assertThat(apiAs(jwt(withNull("sub", Map.of("weir_role", "admin")))).get("/api/v1/tenants").status())
                .isEqualTo(401);
    }

    /**
     * Changed behaviour: a viewer JWT without a tenant claim used to be cluster-wide. A missing
     * claim is more often a forgotten mapping than an intent, so only an explicit {@code *} is.
     */
    @Test
    void aViewerJwtWithoutATenantClaimIsRefusedNotClusterWide() {
        assertThat(apiAs(jwt(Map.of("weir_role", "viewer"))).get("/api/v1/tenants").status()).isEqualTo(401);
        HttpApi clusterViewer = apiAs(jwt(Map.of("weir_role", "viewer", "weir_tenant", "*")));
        assertThat(clusterViewer.get("/api/v1/nodes").status()).isEqualTo(200);
        UUID a = tenant();
        HttpApi viewerOfA = apiAs(jwt(Map.of("weir_role", "viewer", "weir_tenant", a.toString())));
        assertThat(viewerOfA.get("/api/v1/tenants?size=500").json().get("items").findValuesAsString("id"))
                .containsExactly(a.toString());
        assertThat(apiAs(jwt(Map.of("weir_role", "tenant-admin", "weir_tenant", "*"))).get("/api/v1/tenants").status())
                .as("* is for viewers only").isEqualTo(401);
    }

    @Test
    void whileTheIssuerIsDownJwtsAnswer503WithRetryAfter() {
        ISSUER_DOWN.set(true);
        // A key id the service has not seen, so its keys must be fetched whether or not an
        // earlier test already loaded the discovery document.
        Response down = apiAs(jwt(KEY, "k-new", ISSUER_URI, clock.instant().plus(Duration.ofMinutes(5)),
                Map.of("weir_role", "admin"))).get("/api/v1/tenants");
        assertThat(down.status()).isEqualTo(503);
        assertThat(down.contentType()).startsWith("application/problem+json");
        assertThat(Long.parseLong(down.header("Retry-After"))).isPositive();
        assertThat(api.get("/api/v1/tenants").status()).as("Weir tokens keep working").isEqualTo(200);
    }

    @Test
    void anIssuerWithoutAnAudienceDoesNotStart() {
        assertThatThrownBy(() -> new OidcAuthenticator(new SecurityProperties.Oidc(ISSUER_URI, " ", "weir_role",
                "weir_tenant"), clock)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("weir.security.oidc.audience");
    }

    private static Map<String, Object> withNull(String claim, Map<String, Object> claims) {
        Map<String, Object> m = new HashMap<>(claims);
        m.put(claim, null);
        return m;
    }

    @Test
    void weirTokensStillWork() {
        assertThat(api.get("/api/v1/tenants").status()).isEqualTo(200);
        assertThat(apiAs("viewer", null, null).get("/api/v1/tenants").status()).isEqualTo(200);
    }
}
