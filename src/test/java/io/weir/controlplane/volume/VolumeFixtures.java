package io.weir.controlplane.volume;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.support.HttpApi;
import io.weir.controlplane.support.HttpApi.Response;
import java.util.UUID;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * Creates the tenants, policies, nodes and volumes that volume tests need. Nodes are inserted
 * with SQL because the node API is another feature's; everything else goes through the API.
 */
final class VolumeFixtures {

    /** One block: the unit volume sizes come in. */
    static final long BLOCK = 4096;

    private final HttpApi api;
    private final JdbcClient jdbc;

    VolumeFixtures(HttpApi api, JdbcClient jdbc) {
        this.api = api;
        this.jdbc = jdbc;
    }

    String tenant(String name) {
        Response r = api.post("/api/v1/tenants", "{\"name\":\"" + name + "\"}");
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return r.json().get("id").asString();
    }

    String policy(String name, String fields) {
        Response r = api.post("/api/v1/policies", "{\"name\":\"" + name + "\"" + fields + "}");
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return r.json().get("id").asString();
    }

    String node(String name) {
        UUID id = UUID.randomUUID();
        jdbc.sql("INSERT INTO data_node (id, name, version, created_at, updated_at) VALUES (?, ?, 0, now(), now())")
                .param(id).param(name).update();
        return id.toString();
    }

    Response createVolume(String tenantId, String name, String extra) {
        return api.post("/api/v1/tenants/" + tenantId + "/volumes",
                "{\"name\":\"" + name + "\",\"sizeBytes\":" + (256 * BLOCK) + extra + "}");
    }

    /** Creates a volume and answers its path. */
    String volume(String tenantId, String name, String extra) {
        Response r = createVolume(tenantId, name, extra);
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return "/api/v1/volumes/" + r.json().get("id").asString();
    }
}
