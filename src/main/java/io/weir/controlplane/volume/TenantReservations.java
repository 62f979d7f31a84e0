package io.weir.controlplane.volume;

import static io.weir.controlplane.database.SqlSums.sum;

import io.weir.controlplane.web.ApiException;
import io.weir.protocol.QosSettings;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

/**
 * The QoS rule across flows ({@link QosSettings#checkReservations}): on every node, a tenant's
 * {@code maxIops} must carry the sum of the effective {@code minIops} of the tenant's volumes
 * placed on that node. It is checked per node because that is what each node's scheduler checks:
 * the tenant's limit is enforced by every node on its own volumes there.
 *
 * <p>Three writes can break it, and each asks here with its own locks held (see
 * {@code ConfigRevisions} for the order): a tenant change ({@link #checkTenant}, tenant row
 * {@code FOR UPDATE}), a volume write ({@link #checkVolume}, tenant and policy {@code FOR SHARE},
 * then the nodes it reserves on {@code FOR NO KEY UPDATE}, {@link #lockNodes}), and a policy
 * change ({@link #checkPolicy}, policy {@code FOR UPDATE}). Each of them asks after its bump,
 * which holds the revision row to its commit: the three lock different rows, so only the bump
 * makes them run one after the other, and a sum read before it could miss a reservation
 * committed meanwhile by another kind of write (a policy raise beside a new volume on one node:
 * both fit alone and not together, and the node would refuse every snapshot after). A violation
 * is a 409 problem naming the fields, the tenant, the node and the volumes holding the
 * reservations.
 */
@Component
class TenantReservations {

    /** Most volumes named in one problem. */
    private static final int MAX_LISTED = VolumeVetoes.MAX_LISTED;

    /**
     * A volume's reservation as it counts here: the most it can reach, its effective minIops at its
     * allocated size (kept in {@code reserved_iops} by every volume write and policy change).
     */
    private static final String EFFECTIVE_MIN = "v.reserved_iops";

    /** A tenant's reservable IOPS, as {@code Tenant.getReservableIops()} computes it. */
    private static final String RESERVABLE =
            "(CASE WHEN t.max_iops_per_gib IS NULL THEN t.max_iops ELSE coalesce(t.max_iops_floor, 1) END)";

    private final JdbcClient jdbc;

    TenantReservations(JdbcClient jdbc) {
        this.jdbc = jdbc;
    }

    /** A tenant is about to get {@code maxIops}; its volumes' reservations must fit on each node. */
    void checkTenant(UUID tenantId, String tenantName, Long maxIops) {
        if (maxIops == null) {
            return;
        }
        jdbc.sql("SELECT vp.node_id, " + sum(EFFECTIVE_MIN) + " AS reserved FROM volume v"
                        + " JOIN qos_policy p ON p.id = v.policy_id JOIN volume_placement vp ON vp.volume_id = v.id"
                        + " WHERE v.tenant_id = ? GROUP BY vp.node_id HAVING sum(" + EFFECTIVE_MIN + ") > ?"
                        + " ORDER BY reserved DESC, vp.node_id LIMIT 1")
                .param(tenantId).param(maxIops)
                .query((rs, n) -> new NodeSum(rs.getObject(1, UUID.class), rs.getLong(2)))
                .optional()
                .ifPresent(over -> {
                    throw violation("Tenant '" + tenantName + "'", List.of("maxIops"), tenantId, over.nodeId(),
                            maxIops, over.reserved(), reservedOn(tenantId, over.nodeId(), null));
                });
    }

    /**
     * A volume write that will reserve {@code minIops} under {@code tenantMaxIops} on {@code
     * nodeIds} locks those nodes' rows, before its bump (lock order: after the tenant and the
     * policy); its {@link #checkVolume} follows the bump.
     */
    void lockNodes(Long tenantMaxIops, Long minIops, Collection<UUID> nodeIds) {
        List<UUID> nodes = reservingOn(tenantMaxIops, minIops, nodeIds);
        if (nodes.isEmpty()) {
            return;
        }
        // Sorted, so two writers on the same nodes cannot wait for each other in a circle. KEY SHARE
        // (placement foreign keys) passes.
        jdbc.sql("SELECT id FROM data_node WHERE id IN (:ids) ORDER BY id FOR NO KEY UPDATE")
                .param("ids", nodes).query((rs, n) -> 1).list();
    }

    /**
     * The nodes, distinct and sorted, on which a volume reserves {@code minIops} under the
     * tenant's {@code tenantMaxIops}: none when either is unset.
     */
    private static List<UUID> reservingOn(Long tenantMaxIops, Long minIops, Collection<UUID> nodeIds) {
        return tenantMaxIops == null || minIops == null ? List.of() : nodeIds.stream().distinct().sorted().toList();
    }

    /**
     * A volume of {@code tenantId} is about to reserve {@code minIops} on {@code nodeIds}; called
     * after the write's bump and its {@link #lockNodes}.
     *
     * @param volumeId the volume, or null for a new one (its stored reservation is not counted)
     * @param tenantMaxIops the tenant's limit, read under the tenant's {@code FOR SHARE} lock
     */
    void checkVolume(UUID volumeId, UUID tenantId, Long tenantMaxIops, Long minIops, Collection<UUID> nodeIds) {
        for (UUID node : reservingOn(tenantMaxIops, minIops, nodeIds)) {
            long others = jdbc.sql("SELECT " + sum(EFFECTIVE_MIN) + " FROM volume v"
                            + " JOIN qos_policy p ON p.id = v.policy_id JOIN volume_placement vp ON vp.volume_id = v.id"
                            + " WHERE v.tenant_id = ? AND vp.node_id = ? AND v.id IS DISTINCT FROM CAST(? AS uuid)")
                    .param(tenantId).param(node).param(volumeId)
                    .query(Long.class).single();
            long reserved = QosSettings.addReservation(others, minIops);
            if (QosSettings.checkReservations(tenantMaxIops, reserved).isPresent()) {
                throw violation("This volume", List.of("minIops", "nodeIds"), tenantId, node, tenantMaxIops, reserved,
                        reservedOn(tenantId, node, volumeId));
            }
        }
    }

    /**
     * The volumes of policy {@code policyId} have just had their reservations recomputed for the
     * policy's new terms (in this transaction); every tenant with such a volume must still carry
     * its reservations on each node.
     */
    void checkPolicy(UUID policyId, String policyName) {
        jdbc.sql("SELECT v.tenant_id, vp.node_id, " + RESERVABLE + ", " + sum(EFFECTIVE_MIN) + " AS reserved FROM volume v"
                        + " JOIN volume_placement vp ON vp.volume_id = v.id"
                        + " JOIN tenant t ON t.id = v.tenant_id"
                        + " WHERE " + RESERVABLE + " IS NOT NULL"
                        + " AND v.tenant_id IN (SELECT tenant_id FROM volume WHERE policy_id = :policy)"
                        + " GROUP BY v.tenant_id, vp.node_id, " + RESERVABLE + " HAVING sum(" + EFFECTIVE_MIN + ") > " + RESERVABLE
                        + " ORDER BY v.tenant_id, vp.node_id LIMIT 1")
                .param("policy", policyId)
                .query((rs, n) -> new Over(rs.getObject(1, UUID.class), rs.getObject(2, UUID.class), rs.getLong(3),
                        rs.getLong(4)))
                .optional()
                .ifPresent(over -> {
                    throw violation("The new reservation terms of policy '" + policyName + "'",
                            List.of("minIops", "minIopsPerGiB", "minIopsFloor"),
                            over.tenantId(), over.nodeId(), over.maxIops(), over.reserved(),
                            reservedOn(over.tenantId(), over.nodeId(), null));
                });
    }

    private record NodeSum(UUID nodeId, long reserved) {
    }

    private record Over(UUID tenantId, UUID nodeId, long maxIops, long reserved) {
    }

    private record Reserving(UUID id, String name) {
    }

    /** The tenant's volumes on the node that hold a reservation, except {@code except}. */
    private List<Reserving> reservedOn(UUID tenantId, UUID nodeId, UUID except) {
        return jdbc.sql("SELECT v.id, v.name FROM volume v JOIN qos_policy p ON p.id = v.policy_id"
                        + " JOIN volume_placement vp ON vp.volume_id = v.id WHERE v.tenant_id = ? AND vp.node_id = ?"
                        + " AND " + EFFECTIVE_MIN + " IS NOT NULL AND v.id IS DISTINCT FROM CAST(? AS uuid) ORDER BY v.name, v.id LIMIT "
                        + MAX_LISTED)
                .param(tenantId).param(nodeId).param(except)
                .query((rs, n) -> new Reserving(rs.getObject(1, UUID.class), rs.getString(2))).list();
    }

    private static ApiException violation(String subject, List<String> fields, UUID tenantId, UUID nodeId, long maxIops,
            long reserved, List<Reserving> volumes) {
        String rule = QosSettings.checkReservations(maxIops, reserved).map(QosSettings.Violation::message)
                .orElse("maxIops (" + maxIops + ") is below the sum of its volumes' minIops (" + reserved + ")");
        Map<String, Object> properties = new LinkedHashMap<>();
        properties.put("fields", fields);
        properties.put("tenantId", tenantId);
        properties.put("nodeId", nodeId);
        properties.put("volumes", volumes.stream().map(Reserving::name).toList());
        properties.put("volumeIds", volumes.stream().map(Reserving::id).toList());
        return ApiException.conflict(subject + " would break the tenant's limit on node " + nodeId + ": the tenant's "
                + rule + " there, which the node's scheduler refuses", properties);
    }
}
