package io.weir.controlplane.node;

import java.util.Collection;
import java.util.Set;
import java.util.UUID;
import org.springframework.data.jpa.repository.JpaRepository;
import org.springframework.data.jpa.repository.JpaSpecificationExecutor;
import org.springframework.data.jpa.repository.Modifying;
import org.springframework.data.jpa.repository.Query;

/**
 * Data nodes. Lists with label selectors go through {@link NodeSpecifications}; the status updates
 * are bulk updates on purpose: they do not increment the version (see {@link DataNode}).
 */
interface DataNodeRepository extends JpaRepository<DataNode, UUID>, JpaSpecificationExecutor<DataNode> {

    boolean existsByName(String name);

    boolean existsByNameAndIdNot(String name, UUID id);

    @Query("select n.id from DataNode n where n.id in :ids")
    Set<UUID> findExistingIds(Collection<UUID> ids);

    /**
     * Writes what the agents of many nodes answered, in one statement; the arrays are parallel,
     * one element per node. A null revision (and ack time) leaves the node's applied revision and
     * ack time as they are; the last error is set as given, null clearing it. Ack times are in
     * microseconds since the epoch. Rows are locked in id order, so concurrent callers cannot
     * deadlock.
     *
     * @return the number of nodes updated (ids of deleted nodes update nothing)
     */
    @Modifying(flushAutomatically = true, clearAutomatically = true)
    @Query(nativeQuery = true, value = """
            WITH a AS (SELECT * FROM unnest(CAST(:ids AS uuid[]), CAST(:revisions AS bigint[]),
                                            CAST(:atMicros AS bigint[]), CAST(:errors AS text[]))
                       AS a(id, revision, at_micros, error)),
                 locked AS (SELECT n.id FROM data_node n WHERE n.id IN (SELECT id FROM a) ORDER BY n.id FOR UPDATE)
            UPDATE data_node n
               SET applied_revision = COALESCE(a.revision, n.applied_revision),
                   last_ack_at = COALESCE(TIMESTAMPTZ 'epoch' + a.at_micros * INTERVAL '1 microsecond', n.last_ack_at),
                   last_error = a.error
              FROM a JOIN locked l ON l.id = a.id
             WHERE n.id = a.id""")
    int recordAnswers(UUID[] ids, Long[] revisions, Long[] atMicros, String[] errors);
}
