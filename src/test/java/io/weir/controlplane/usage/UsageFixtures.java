package io.weir.controlplane.usage;

import io.weir.controlplane.support.HttpApi;
import io.weir.protocol.UsageReport;
import io.weir.protocol.UsageReport.Gap;
import io.weir.protocol.UsageReport.TaskUsage;
import io.weir.protocol.UsageReport.VolumeUsage;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/** Builds tenants, volumes and usage reports for the usage tests. */
final class UsageFixtures {

    private UsageFixtures() {
    }

    static UUID tenant(HttpApi api, String name) {
        HttpApi.Response r = api.post("/api/v1/tenants", "{\"name\":\"" + name + "\"}");
        if (r.status() != 201) {
            throw new IllegalStateException(r.toString());
        }
        return UUID.fromString(r.json().get("id").asString());
    }

    static UUID volume(HttpApi api, UUID tenant, String name, UUID... nodes) {
        StringBuilder ids = new StringBuilder();
        for (UUID n : nodes) {
            ids.append(ids.isEmpty() ? "" : ",").append('"').append(n).append('"');
        }
        HttpApi.Response r = api.post("/api/v1/tenants/" + tenant + "/volumes", "{\"name\":\"" + name
                + "\",\"sizeBytes\":1048576,\"nodeIds\":[" + ids + "]}");
        if (r.status() != 201) {
            throw new IllegalStateException(r.toString());
        }
        return UUID.fromString(r.json().get("id").asString());
    }

    static UUID node(HttpApi api, String name) {
        HttpApi.Response r = api.post("/api/v1/nodes", "{\"name\":\"" + name + "\"}");
        if (r.status() != 201) {
            throw new IllegalStateException(r.toString());
        }
        return UUID.fromString(r.json().get("id").asString());
    }

    /**
     * A volume's figures where every field is derived from {@code n}, so sums are easy to predict:
     * reads n, writes 2n, read bytes 4096n, write bytes 8192n, p50 100 + n, p99 1000 + n, max
     * 5000 + n µs, queue depth n / 10, throttled n ms, rejected n % 3, CPU n µs.
     */
    static VolumeUsage figures(UUID volume, long n) {
        return new VolumeUsage(volume, n, 2 * n, 4096 * n, 8192 * n, 100 + n, 1000 + n, 5000 + n, n / 10.0,
                n * 1_000_000, n % 3, n * 1_000);
    }

    static UsageReport report(long seq, Instant from, Duration length, List<VolumeUsage> volumes) {
        return new UsageReport(seq, from, from.plus(length), volumes,
                List.of(new TaskUsage("foreground", 10 * seq, 7_000_000 * seq, 8_000_000 * seq, 700),
                        new TaskUsage("gc", seq, 1_000_000 * seq, 2_000_000 * seq, 100)), List.of());
    }

    static UsageReport withGaps(UsageReport r, Gap... gaps) {
        return new UsageReport(r.sequence(), r.from(), r.to(), r.volumes(), r.tasks(), List.of(gaps));
    }
}
