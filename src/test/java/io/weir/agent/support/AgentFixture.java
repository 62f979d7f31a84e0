package io.weir.agent.support;

import io.weir.agent.AgentListener;
import io.weir.agent.ConfigTranslator;
import io.weir.agent.QosAgent;
import io.weir.controlplane.support.HttpApi;
import io.weir.protocol.DesiredConfig;
import io.weir.scheduler.QosExecutor;
import io.weir.scheduler.SchedulerConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * What the agent tests set up through the REST API of a control plane: a tenant, a policy, a data
 * node with one volume of that policy placed on it, and a node token; and real agents over real
 * {@link QosExecutor}s, closed by {@link #close()}.
 */
public final class AgentFixture implements AutoCloseable {

    /** One data node as the control plane knows it. */
    public record Node(String nodeId, String token, String tenantId, String policyId, String volumeId) {
        public UUID id() {
            return UUID.fromString(nodeId);
        }
    }

    /** A running agent, its executor, and what its listener heard. */
    public record RunningAgent(QosAgent agent, QosExecutor executor, List<Long> applied, List<String> rejected,
            AtomicReference<DesiredConfig> lastApplied) {

        /**
         * The maxIops the executor enforces for {@code volumeId} once the agent has finished
         * applying the snapshot that set it; empty if the executor lacks the volume, and while a
         * snapshot is half applied. The agent reconfigures the executor first and records the
         * revision and tells its listener after, so a test that saw the executor's new limit
         * could otherwise still read the previous {@code appliedRevision}.
         */
        public Optional<Long> maxIops(String volumeId) {
            Optional<Long> enforced = maxIops(executor.config(), volumeId);
            DesiredConfig heard = lastApplied.get();
            Optional<Long> told = heard == null ? Optional.empty() : maxIops(ConfigTranslator.translate(heard), volumeId);
            return enforced.equals(told) ? enforced : Optional.empty();
        }

        private static Optional<Long> maxIops(SchedulerConfig config, String volumeId) {
            return config.volumes().stream().filter(v -> v.id().equals(volumeId))
                    .map(SchedulerConfig.VolumeSpec::maxIops).findFirst();
        }
    }

    private final HttpApi api;
    private final List<AutoCloseable> toClose = new ArrayList<>();

    public AgentFixture(HttpApi api) {
        this.api = api;
    }

    /**
     * Creates a tenant, a policy with {@code maxIops}, a node, a volume of the policy placed on the
     * node, and a node token for it.
     */
    public Node node(String prefix, long maxIops) {
        String suffix = UUID.randomUUID().toString().substring(0, 8);
        String tenantId = created(api.post("/api/v1/tenants", "{\"name\":\"" + prefix + "-t-" + suffix + "\"}"));
        String policyId = created(api.post("/api/v1/policies", "{\"name\":\"" + prefix + "-p-" + suffix
                + "\",\"maxIops\":" + maxIops + "}"));
        String nodeId = created(api.post("/api/v1/nodes", "{\"name\":\"" + prefix + "-n-" + suffix + "\"}"));
        String volumeId = created(api.post("/api/v1/tenants/" + tenantId + "/volumes", "{\"name\":\"" + prefix + "-v-"
                + suffix + "\",\"sizeBytes\":1048576,\"nodeIds\":[\"" + nodeId + "\"],\"policyId\":\"" + policyId + "\"}"));
        HttpApi.Response token = api.post("/api/v1/tokens", "{\"name\":\"" + prefix + "-k-" + suffix
                + "\",\"role\":\"node\",\"nodeId\":\"" + nodeId + "\"}");
        if (token.status() != 201) {
            throw new IllegalStateException("could not mint a node token: " + token);
        }
        return new Node(nodeId, token.json().get("token").asString(), tenantId, policyId, volumeId);
    }

    /** Sets the policy's maxIops through the REST API (a merge patch) and answers the response. */
    public HttpApi.Response setPolicyMaxIops(Node node, long maxIops) {
        HttpApi.Response r = api.patch("/api/v1/policies/" + node.policyId(), "{\"maxIops\":" + maxIops + "}", null);
        if (r.status() != 200) {
            throw new IllegalStateException("could not change the policy: " + r);
        }
        return r;
    }

    /** {@code GET /nodes/{id}}'s status object. */
    public tools.jackson.databind.JsonNode status(Node node) {
        HttpApi.Response r = api.get("/api/v1/nodes/" + node.nodeId());
        if (r.status() != 200) {
            throw new IllegalStateException("could not read the node: " + r);
        }
        return r.json().get("status");
    }

    /** Starts an agent for {@code node} against the control plane on {@code port}. */
    public RunningAgent start(Node node, int port, Path stateDir) {
        return start(node, port, stateDir, b -> { });
    }

    /** Starts an agent, letting {@code customize} add to its builder (a check, a heartbeat, ...). */
    public RunningAgent start(Node node, int port, Path stateDir, Consumer<QosAgent.Builder> customize) {
        return start(node, port, stateDir, true, customize);
    }

    /** Starts an agent that knows only {@code node}'s token, not its id (as a deployed data node does). */
    public RunningAgent startWithTokenOnly(Node node, int port, Path stateDir) {
        return start(node, port, stateDir, false, b -> { });
    }

    private RunningAgent start(Node node, int port, Path stateDir, boolean nameTheNode, Consumer<QosAgent.Builder> customize) {
        QosExecutor executor = QosExecutor.builder(SchedulerConfig.builder().defaultTasks().build()).workers(1).build();
        toClose.add(executor);
        List<Long> applied = new CopyOnWriteArrayList<>();
        AtomicReference<DesiredConfig> lastApplied = new AtomicReference<>();
        List<String> rejected = new CopyOnWriteArrayList<>();
        QosAgent.Builder builder = QosAgent.builder()
                .controlPlane(URI.create("http://127.0.0.1:" + port))
                .token(node.token())
                .stateDir(stateDir)
                .executor(executor)
                .backoff(Duration.ofMillis(50), Duration.ofMillis(500))
                .listener(new AgentListener() {
                    @Override
                    public void applied(DesiredConfig config) {
                        applied.add(config.revision());
                        lastApplied.set(config);
                    }

                    @Override
                    public void rejected(DesiredConfig config, String reason) {
                        rejected.add(reason);
                    }
                });
        if (nameTheNode) {
            builder.nodeId(node.id());
        }
        customize.accept(builder);
        QosAgent agent = builder.build();
        toClose.add(0, agent);
        try {
            agent.start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new RunningAgent(agent, executor, applied, rejected, lastApplied);
    }

    private static String created(HttpApi.Response r) {
        if (r.status() != 201) {
            throw new IllegalStateException("could not create: " + r);
        }
        return r.json().get("id").asString();
    }

    @Override
    public void close() {
        for (AutoCloseable c : toClose) {
            try {
                c.close();
            } catch (Exception ignored) {
                // best effort in tests' clean-up
            }
        }
        toClose.clear();
    }
}
