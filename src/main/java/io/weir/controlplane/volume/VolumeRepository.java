package io.weir.controlplane.volume;

import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.springframework.data.domain.Page;
import org.springframework.data.domain.Pageable;
import org.springframework.data.jpa.repository.EntityGraph;
import org.springframework.data.jpa.repository.JpaRepository;
import org.springframework.data.jpa.repository.Modifying;
import org.springframework.data.jpa.repository.Query;
import org.springframework.data.repository.query.Param;

interface VolumeRepository extends JpaRepository<Volume, UUID> {

    /** Just the owning tenant, for the visibility check before a write (a volume never changes tenant). */
    @Query("select v.tenantId from Volume v where v.id = :id")
    Optional<UUID> findTenantIdById(@Param("id") UUID id);

    /**
     * The volume with its placement, read in one statement: under READ COMMITTED a separate,
     * later read of the placement could see a newer commit than the version read with the row,
     * and a write would then compare against a state that never existed.
     */
    @EntityGraph(attributePaths = "nodeIds")
    Optional<Volume> findWithNodeIdsById(UUID id);

    boolean existsByTenantIdAndName(UUID tenantId, String name);

    boolean existsByTenantIdAndNameAndIdNot(UUID tenantId, String name, UUID id);

    Page<Volume> findByTenantId(UUID tenantId, Pageable pageable);

    Page<Volume> findByTenantIdAndNameContaining(UUID tenantId, String fragment, Pageable pageable);

    Page<Volume> findByNodeIdsContaining(UUID nodeId, Pageable pageable);

    Page<Volume> findByTenantIdAndNodeIdsContaining(UUID tenantId, UUID nodeId, Pageable pageable);

    /**
     * The volumes placed on any of {@code nodeIds}, ordered by tenant id, name and id, with their
     * node ids fetched in the same query (a push to every node reads them all).
     */
    @Query("select distinct v from Volume v left join fetch v.nodeIds "
            + "where v.id in (select p.id from Volume p join p.nodeIds n where n in :nodeIds) "
            + "order by v.tenantId, v.name, v.id")
    List<Volume> findPlacedOnAny(Collection<UUID> nodeIds);

    // Blockers of deletes elsewhere: a bounded list of names plus the full count.

    List<Volume> findTop100ByTenantIdOrderByNameAscIdAsc(UUID tenantId);

    long countByTenantId(UUID tenantId);

    List<Volume> findTop100ByPolicyIdOrderByNameAscIdAsc(UUID policyId);

    long countByPolicyId(UUID policyId);

    List<Volume> findTop100ByNodeIdsContainingOrderByNameAscIdAsc(UUID nodeId);

    long countByNodeIdsContaining(UUID nodeId);

    @Query("select count(v) > 0 from Volume v where v.tenantId = :tenantId and v.nodeIds is not empty")
    boolean existsPlacedInTenant(@Param("tenantId") UUID tenantId);

    @Query("select count(v) > 0 from Volume v where v.policyId = :policyId and v.nodeIds is not empty")
    boolean existsPlacedWithPolicy(@Param("policyId") UUID policyId);

    /** Volumes of a policy that override a limit: the only ones a change of the policy's limits can upset. */
    @Query("select v from Volume v where v.policyId = :policyId order by v.name, v.id")
    List<Volume> findAllByPolicyIdOrdered(@Param("policyId") UUID policyId);

    /** Sets the most IOPS a volume can reserve (see {@link Volume#getReservedIops}); no version change. */
    @Modifying(flushAutomatically = true)
    @Query("update Volume v set v.reservedIops = :reserved where v.id = :id")
    int updateReservedIops(@Param("id") UUID id, @Param("reserved") Long reserved);
}
