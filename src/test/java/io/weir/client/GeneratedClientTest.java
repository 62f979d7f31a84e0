package io.weir.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.weir.client.api.NodesApi;
import io.weir.client.api.PoliciesApi;
import io.weir.client.api.TaskSharesApi;
import io.weir.client.api.TenantsApi;
import io.weir.client.api.VolumesApi;
import io.weir.client.model.CostModelRequest;
import io.weir.client.model.DesiredConfig;
import io.weir.client.model.DynamicShareRequest;
import io.weir.client.model.Node;
import io.weir.client.model.NodeRequest;
import io.weir.client.model.TaskShareConfig;
import io.weir.client.model.TaskShareRequest;
import io.weir.client.model.TaskShares;
import io.weir.client.model.TaskSharesRequest;
import io.weir.client.model.TenantConfig;
import io.weir.client.model.VolumeConfig;
import io.weir.client.model.Policy;
import io.weir.client.model.PolicyRequest;
import io.weir.client.model.Tenant;
import io.weir.client.model.TenantRequest;
import io.weir.client.model.Volume;
import io.weir.client.model.VolumeOverridesRequest;
import io.weir.client.model.VolumeRequest;
import io.weir.controlplane.support.IntegrationTest;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Drives a live control plane through the Java client that the build generates from the
 * committed OpenAPI spec, as automation would.
 */
class GeneratedClientTest extends IntegrationTest {

    private TenantsApi tenants;
    private PoliciesApi policies;
    private VolumesApi volumes;
    private NodesApi nodes;
    private TaskSharesApi taskShares;
    private io.weir.client.api.ClientCertificatesApi clientCertificates;

    @BeforeEach
    void client() {
        ApiClient client = new ApiClient();
        client.updateBaseUri(api.baseUrl());
        client.setRequestInterceptor(request -> api.defaultHeaders().forEach(request::header));
        tenants = new TenantsApi(client);
        policies = new PoliciesApi(client);
        volumes = new VolumesApi(client);
        nodes = new NodesApi(client);
        taskShares = new TaskSharesApi(client);
        clientCertificates = new io.weir.client.api.ClientCertificatesApi(client);
    }

    @Test
    void automationIssuesListsAndRevokesATenantsClientCertificateThroughTheGeneratedClient() throws Exception {
        Node node = nodes.createNode(new NodeRequest().name(unique("dn")).address("10.0.0.8:10809"));
        Tenant tenant = tenants.createTenant(new TenantRequest().name(unique("gen")));
        volumes.createVolume(tenant.getId(), new VolumeRequest().name("tls").sizeBytes(1L << 20).nodeIds(Set.of(node.getId())));
        io.weir.client.model.IssuedClientCertificate issued = clientCertificates.createClientCertificate(tenant.getId(),
                new io.weir.client.model.ClientCertificateRequest().name("backup"));
        assertThat(issued.getCertificatePem()).startsWith("-----BEGIN CERTIFICATE-----");
        assertThat(issued.getCaCertificatePem()).startsWith("-----BEGIN CERTIFICATE-----");
        assertThat(issued.getPrivateKeyPem()).startsWith("-----BEGIN PRIVATE KEY-----");
        assertThat(issued.getNotAfter()).isAfter(java.time.OffsetDateTime.now());
        assertThat(clientCertificates.listClientCertificates(tenant.getId(), 0, 20).getItems())
                .extracting(io.weir.client.model.ClientCertificate::getSerial).containsExactly(issued.getSerial());
        DesiredConfig desired = nodes.getDesiredConfig(node.getId());
        assertThat(desired.getTls().getClientCertificates()).extracting(io.weir.client.model.ClientCertificateEntry::getSerial)
                .contains(issued.getSerial());
        clientCertificates.revokeClientCertificate(tenant.getId(), issued.getId());
        assertThat(nodes.getDesiredConfig(node.getId()).getTls().getRevoked())
                .extracting(io.weir.client.model.ClientCertificateEntry::getSerial).contains(issued.getSerial());
        assertThat(clientCertificates.listClientCertificates(tenant.getId(), 0, 20).getItems().get(0).getRevokedAt()).isNotNull();
    }

    @Test
    void automationCreatesReadsUpdatesAndDeletesThroughTheGeneratedClient() throws Exception {
        Tenant tenant = tenants.createTenant(new TenantRequest().name(unique("gen")).weight(300));
        Policy policy = policies.createPolicy(new PolicyRequest().name(unique("gold"))
                .weight(500).minIops(100L).maxIops(2000L).burstIops(4000L)
                .costModel(new CostModelRequest().minChargeBytes(8192)));
        Volume volume = volumes.createVolume(tenant.getId(), new VolumeRequest()
                .name("db").sizeBytes(1L << 30).policyId(policy.getId())
                .overrides(new VolumeOverridesRequest().maxIops(1500L)));

        assertThat(tenants.getTenant(tenant.getId()).getWeight()).isEqualTo(300);
        assertThat(policies.getPolicy(policy.getId()).getCostModel().getMinChargeBytes()).isEqualTo(8192);
        Volume read = volumes.getVolume(volume.getId());
        assertThat(read.getTenantId()).isEqualTo(tenant.getId());
        assertThat(read.getEffectivePolicy().getWeight()).isEqualTo(500);
        assertThat(read.getEffectivePolicy().getMaxIops()).isEqualTo(1500L);
        assertThat(read.getEffectivePolicy().getMinIops()).isEqualTo(100L);

        ApiResponse<Volume> current = volumes.getVolumeWithHttpInfo(volume.getId());
        String etag = current.getHeaders().get("etag").get(0);
        Volume grown = volumes.patchVolume(volume.getId(), Map.of("sizeBytes", 2L << 30), etag);
        assertThat(grown.getSizeBytes()).isEqualTo(2L << 30);

        ApiException stale = catchThrowableOfType(ApiException.class,
                () -> volumes.patchVolume(volume.getId(), Map.of("sizeBytes", 3L << 30), etag));
        assertThat(stale.getCode()).isEqualTo(412);
        assertThat(stale.getResponseBody()).contains("\"status\":412");
        assertThat(volumes.getVolume(volume.getId()).getSizeBytes()).isEqualTo(2L << 30);

        ApiException inUse = catchThrowableOfType(ApiException.class, () -> tenants.deleteTenant(tenant.getId(), null));
        assertThat(inUse.getCode()).isEqualTo(409);

        volumes.deleteVolume(volume.getId(), null);
        policies.deletePolicy(policy.getId(), null);
        tenants.deleteTenant(tenant.getId(), null);
        ApiException gone = catchThrowableOfType(ApiException.class, () -> tenants.getTenant(tenant.getId()));
        assertThat(gone.getCode()).isEqualTo(404);
    }

    @Test
    void automationPlacesAVolumeOnANodeTunesItsTaskSharesAndReadsItsDesiredConfig() throws Exception {
        Node node = nodes.createNode(new NodeRequest().name(unique("dn")).address("10.0.0.7:10809")
                .labels(Map.of("rack", "r1")));
        assertThat(node.getToken()).as("the node token is shown once, on create").startsWith("weir_");
        Tenant tenant = tenants.createTenant(new TenantRequest().name(unique("gen")).weight(200));
        Volume volume = volumes.createVolume(tenant.getId(), new VolumeRequest()
                .name("logs").sizeBytes(1L << 20).nodeIds(Set.of(node.getId())));

        TaskShares before = taskShares.getNodeTaskShares(node.getId());
        assertThat(before.getSource()).isEqualTo(TaskShares.SourceEnum.CLUSTER_DEFAULT);
        String etag = taskShares.getNodeTaskSharesWithHttpInfo(node.getId()).getHeaders().get("etag").get(0);
        TaskSharesRequest shares = new TaskSharesRequest().tasks(List.of(
                new TaskShareRequest().name("foreground").share(800),
                new TaskShareRequest().name("flush").share(100).dynamic(new DynamicShareRequest()
                        .t1(0.5).t2(0.9).low(50).high(600).curve(DynamicShareRequest.CurveEnum.EXPONENTIAL))));
        TaskShares override = taskShares.replaceNodeTaskShares(node.getId(), shares, etag);
        assertThat(override.getSource()).isEqualTo(TaskShares.SourceEnum.NODE_OVERRIDE);

        ApiException stale = catchThrowableOfType(ApiException.class,
                () -> taskShares.replaceNodeTaskShares(node.getId(), shares, etag));
        assertThat(stale.getCode()).isEqualTo(412);

        DesiredConfig config = nodes.getDesiredConfig(node.getId());
        assertThat(config.getNodeId()).isEqualTo(node.getId());
        assertThat(config.getRevision()).isEqualTo(nodes.getNode(node.getId()).getStatus().getDesiredRevision());
        assertThat(config.getTasks()).extracting(TaskShareConfig::getName).containsExactly("foreground", "flush");
        assertThat(config.getTasks().get(1).getDynamic().getHigh()).isEqualTo(600);
        assertThat(config.getTenants()).extracting(TenantConfig::getId).containsExactly(tenant.getId());
        assertThat(config.getVolumes()).extracting(VolumeConfig::getId).containsExactly(volume.getId());
        assertThat(config.getVolumes().get(0).getEffectivePolicy().getWeight()).isEqualTo(100);

        volumes.deleteVolume(volume.getId(), null);
        nodes.deleteNode(node.getId(), null);
        tenants.deleteTenant(tenant.getId(), null);
    }
}
