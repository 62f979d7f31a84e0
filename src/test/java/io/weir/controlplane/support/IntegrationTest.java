package io.weir.controlplane.support;

import io.weir.controlplane.ControlPlaneApplication;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Base of the control plane's integration tests: the whole application on a random port, over
 * the shared real PostgreSQL of {@link TestDatabase}, driven through real HTTP.
 *
 * <p>All subclasses share one Spring context (same configuration), so tests must not assume an
 * empty database: they create what they need under {@link #unique(String) unique names}.
 */
@SpringBootTest(classes = ControlPlaneApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
public abstract class IntegrationTest {

    @LocalServerPort
    protected int port;

    protected HttpApi api;

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        TestDatabase.Coordinates db = TestDatabase.get();
        registry.add("spring.datasource.url", db::jdbcUrl);
        registry.add("spring.datasource.username", db::username);
        registry.add("spring.datasource.password", db::password);
    }

    @BeforeEach
    void setUpApi() {
        api = new HttpApi(port);
    }

    /** A resource name that no other test uses: {@code prefix-} and 8 random characters. */
    protected static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }
}
