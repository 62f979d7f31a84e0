package io.weir.controlplane.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * The served OpenAPI document must equal the committed {@code src/main/openapi/weir-api.json},
 * from which the build generates the Java client.
 *
 * <p>After an intended API change, refresh the file with
 * {@code mvn test -Dtest=OpenApiSpecTest -Dweir.openapi.write=true} and commit it.
 */
class OpenApiSpecTest extends IntegrationTest {

    static final Path COMMITTED = Path.of("src/main/openapi/weir-api.json");

    private static final JsonMapper MAPPER = JsonMapper.builder().enable(SerializationFeature.INDENT_OUTPUT).build();

    @Test
    void servedSpecMatchesTheCommittedFile() throws Exception {
        Response served = api.get("/v3/api-docs");
        assertThat(served.status()).isEqualTo(200);
        JsonNode spec = MAPPER.readTree(served.body());
        if (Boolean.getBoolean("weir.openapi.write")) {
            Files.writeString(COMMITTED, MAPPER.writeValueAsString(spec) + "\n");
        }
        assertThat(Files.exists(COMMITTED))
                .as("committed spec %s; create it with -Dweir.openapi.write=true", COMMITTED)
                .isTrue();
        JsonNode committed = MAPPER.readTree(Files.readString(COMMITTED));
        assertThat(spec)
                .as("served /v3/api-docs differs from %s; if the change is intended, regenerate with "
                        + "mvn test -Dtest=OpenApiSpecTest -Dweir.openapi.write=true", COMMITTED)
                .isEqualTo(committed);
    }

    @Test
    void operationIdsAreMeaningfulAndUnique() throws Exception {
        JsonNode spec = MAPPER.readTree(api.get("/v3/api-docs").body());
        java.util.List<String> ids = spec.get("paths").findValuesAsString("operationId");
        assertThat(ids).isNotEmpty().doesNotHaveDuplicates();
        assertThat(ids).allSatisfy(id -> assertThat(id).matches("[a-z][A-Za-z]+"));
    }

    @Test
    void swaggerUiIsServed() {
        Response ui = api.get("/swagger-ui/index.html");
        assertThat(ui.status()).isEqualTo(200);
        assertThat(ui.body()).contains("swagger");
    }
}
