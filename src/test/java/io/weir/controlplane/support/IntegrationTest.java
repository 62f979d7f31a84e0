package io.weir.controlplane.support;

import io.weir.controlplane.ControlPlaneApplication;
import io.weir.controlplane.security.AuthFailureLimiter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.time.Clock;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeEach;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Primary;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Base of the control plane's integration tests: the whole application on a random port, over
 * the shared real PostgreSQL of {@link TestDatabase}, driven through real HTTP.
 *
 * <p>All subclasses share one Spring context (same configuration), so tests must not assume an
 * empty database: they create what they need under {@link #unique(String) unique names}.
 *
 * <h2>Security</h2>
 * {@link #api} sends the admin token {@link #ADMIN_TOKEN}, which the service's bootstrap creates
 * from {@code weir.security.bootstrap-token} in the fresh test database. {@link #anonymousApi()}
 * sends none, and {@link #mintToken} / {@link #apiAs} create and use tokens of the other roles.
 * The context's {@link Clock} is a {@link MutableClock}, reset before each test together with
 * the failed-authentication limiter (every test connects from 127.0.0.1).
 */
@SpringBootTest(classes = ControlPlaneApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@Import(IntegrationTest.TestClockConfiguration.class)
public abstract class IntegrationTest {

    /** How many names {@link #unique} has handed out in this JVM. */
    private static final AtomicLong NAMES = new AtomicLong();

    /** The bootstrap admin token of the test database. */
    public static final String ADMIN_TOKEN = "weir_000000000000000000000000000000a1_test-admin-token-of-the-integration-tests0";

    @LocalServerPort
    protected int port;

    /** A client that sends {@link #ADMIN_TOKEN}. */
    protected HttpApi api;

    @Autowired
    protected MutableClock clock;

    @Autowired
    private AuthFailureLimiter authFailureLimiter;

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        TestDatabase.Coordinates db = TestDatabase.get();
        registry.add("spring.datasource.url", db::jdbcUrl);
        registry.add("spring.datasource.username", db::username);
        registry.add("spring.datasource.password", db::password);
        registry.add("weir.security.bootstrap-token", () -> ADMIN_TOKEN);
        registry.add("weir.data-dir", IntegrationTest::tempDataDir);
    }

    @BeforeEach
    void setUpApi() {
        clock.reset();
        authFailureLimiter.reset();
        api = new HttpApi(port).withHeader("Authorization", "Bearer " + ADMIN_TOKEN);
    }

    /** A client that sends no credentials. */
    protected HttpApi anonymousApi() {
        return new HttpApi(port);
    }

    /** A client that sends {@code token} as its bearer token. */
    protected HttpApi apiAs(String token) {
        return new HttpApi(port).withHeader("Authorization", "Bearer " + token);
    }

    /**
     * Creates a token through the API and returns its secret.
     *
     * @param role admin, tenant-admin, viewer or node
     * @param tenantId the tenant of a tenant-admin or a bound viewer, else null
     * @param nodeId the node of a node token, else null
     */
    protected String mintToken(String role, UUID tenantId, UUID nodeId) {
        StringBuilder body = new StringBuilder("{\"name\":\"" + unique("t-" + role) + "\",\"role\":\"" + role + "\"");
        if (tenantId != null) {
            body.append(",\"tenantId\":\"").append(tenantId).append('"');
        }
        if (nodeId != null) {
            body.append(",\"nodeId\":\"").append(nodeId).append('"');
        }
        HttpApi.Response r = api.post("/api/v1/tokens", body.append('}').toString());
        if (r.status() != 201) {
            throw new IllegalStateException("could not mint a " + role + " token: " + r);
        }
        return r.json().get("token").asString();
    }

    /** A client with a new token of {@code role}, see {@link #mintToken}. */
    protected HttpApi apiAs(String role, UUID tenantId, UUID nodeId) {
        return apiAs(mintToken(role, tenantId, nodeId));
    }

    /** Registers a data node through the API and answers its id. */
    protected String newNode() {
        HttpApi.Response r = api.post("/api/v1/nodes", "{\"name\":\"" + unique("node") + "\"}");
        if (r.status() != 201) {
            throw new IllegalStateException("could not create a node: " + r);
        }
        return r.json().get("id").asString();
    }

    /**
     * Creates a volume of {@code tenantId} placed on a new node, with the extra JSON members
     * {@code extra} (such as {@code ,"policyId":"..."}), and answers its id. Placed, so that changes
     * of its tenant or policy reach a node and bump the config revision.
     */
    protected String createPlacedVolume(String tenantId, String extra) {
        HttpApi.Response r = api.post("/api/v1/tenants/" + tenantId + "/volumes", "{\"name\":\"" + unique("placed")
                + "\",\"sizeBytes\":1048576,\"nodeIds\":[\"" + newNode() + "\"]" + extra + "}");
        if (r.status() != 201) {
            throw new IllegalStateException("could not create a placed volume: " + r);
        }
        return r.json().get("id").asString();
    }

    /**
     * The last page (of 500) of a list ordered oldest first, which holds what was just created
     * however many items earlier tests left in the shared database. {@code pathAndQuery} must
     * already have a query string.
     */
    protected HttpApi.Response newestPage(String pathAndQuery) {
        HttpApi.Response first = api.get(pathAndQuery + "&size=500");
        long total = first.json().get("totalItems").asLong();
        return total <= 500 ? first : api.get(pathAndQuery + "&size=500&page=" + (total - 1) / 500);
    }

    /**
     * A resource name that no other test of this JVM uses: {@code prefix-}, 8 random hex digits,
     * {@code -} and a counter. The counter makes it unique for certain (8 random digits alone
     * collide once in a while over the thousands of names a run creates on its one database);
     * the random digits keep one name from containing another, for the lists filtered by a name
     * fragment.
     */
    protected static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8) + "-" + NAMES.incrementAndGet();
    }

    private static String tempDataDir() {
        try {
            return Files.createTempDirectory("weir-test-data").toString();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @TestConfiguration(proxyBeanMethods = false)
    static class TestClockConfiguration {
        @Bean
        @Primary
        MutableClock testClock() {
            return new MutableClock();
        }
    }
}
