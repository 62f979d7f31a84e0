package io.weir.controlplane.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.database.EmbeddedPostgresServer;
import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.health.actuate.endpoint.HealthEndpointGroups;
import org.springframework.context.ApplicationContext;

class OperationsEndpointsTest extends IntegrationTest {

    @Autowired
    ApplicationContext context;

    @Autowired
    HealthEndpointGroups healthGroups;

    @Test
    void livenessIsUpAndDoesNotDependOnTheDatabase() {
        Response r = anonymousApi().get("/actuator/health/liveness");
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.json().get("status").asString()).isEqualTo("UP");
        assertThat(healthGroups.get("liveness").isMember("db")).isFalse();
        assertThat(healthGroups.get("liveness").isMember("livenessState")).isTrue();
    }

    @Test
    void readinessIncludesTheDatabase() {
        Response r = anonymousApi().get("/actuator/health/readiness");
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.json().get("status").asString()).isEqualTo("UP");
        assertThat(healthGroups.get("readiness").isMember("db")).isTrue();
        assertThat(healthGroups.get("readiness").isMember("readinessState")).isTrue();
    }

    @Test
    void prometheusEndpointServesMetrics() {
        Response r = api.get("/actuator/prometheus");
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.body()).contains("jvm_memory_used_bytes").contains("hikaricp_connections");
    }

    @Test
    void onlyHealthAndPrometheusAreExposed() {
        assertThat(api.get("/actuator/env").status()).isEqualTo(404);
        assertThat(api.get("/actuator/beans").status()).isEqualTo(404);
    }

    @Test
    void configuredDatasourceUrlStartsNoEmbeddedServer() {
        assertThat(context.getBeansOfType(EmbeddedPostgresServer.class)).isEmpty();
    }
}
