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
 * are bulk updates on purpose: they do not increment the version (see {@link Node}).
 */
interface NodeRepository extends JpaRepository<Node, UUID>, JpaSpecificationExecutor<Node> {

    boolean existsByName(String name);

    boolean existsByNameAndIdNot(String name, UUID id);

    @Query("select n.id from Node n where n.id in :ids")
    Set<UUID> findExistingIds(Collection<UUID> ids);

    /**
     * Writes what the agents of many nodes answered, in one statement; the arrays are parallel,
     * one element per node. Answers are ordered by their times, not by the order of the writes
     * (another replica may have stored a newer answer first): an ack (revision and ack time) is
     * stored only if it is later than the stored ack, and the error (null clearing it) only if
     * the answer is later than the stored last answer. A null revision (and ack time) leaves the
     * applied revision and ack time as they are. Times are in microseconds since the epoch. Rows
     * are locked in id order, so concurrent callers cannot deadlock.
     *
     * @return the number of nodes updated (ids of deleted nodes update nothing)
     */
    @Modifying(flushAutomatically = true, clearAutomatically = true)
    @Query(nativeQuery = true, value = """
            WITH a AS (SELECT id, revision, error,
                              TIMESTAMPTZ 'epoch' + ack_micros * INTERVAL '1 microsecond' AS ack_at,
                              TIMESTAMPTZ 'epoch' + answer_micros * INTERVAL '1 microsecond' AS answer_at
                         FROM unnest(CAST(:ids AS uuid[]), CAST(:revisions AS bigint[]), CAST(:ackMicros AS bigint[]),
                                     CAST(:errors AS text[]), CAST(:answerMicros AS bigint[]))
                              AS a(id, revision, ack_micros, error, answer_micros)),
                 locked AS (SELECT n.id FROM data_node n WHERE n.id IN (SELECT id FROM a) ORDER BY n.id FOR UPDATE)
            UPDATE data_node n
               SET applied_revision = CASE WHEN a.ack_at > n.last_ack_at OR n.last_ack_at IS NULL AND a.ack_at IS NOT NULL
                                           THEN a.revision ELSE n.applied_revision END,
                   last_ack_at = GREATEST(a.ack_at, n.last_ack_at),
                   last_error = CASE WHEN n.last_answer_at IS NULL OR a.answer_at >= n.last_answer_at
                                     THEN a.error ELSE n.last_error END,
                   last_answer_at = GREATEST(a.answer_at, n.last_answer_at)
              FROM a JOIN locked l ON l.id = a.id
             WHERE n.id = a.id""")
    int recordAnswers(UUID[] ids, Long[] revisions, Long[] ackMicros, String[] errors, Long[] answerMicros);
}
