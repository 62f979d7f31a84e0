package io.weir.controlplane.taskshare;

import io.weir.protocol.DesiredConfig;
import io.weir.protocol.IoCost;
import io.weir.protocol.TaskShareConfig;
import jakarta.persistence.CollectionTable;
import jakarta.persistence.Column;
import jakarta.persistence.ElementCollection;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.JoinColumn;
import jakarta.persistence.OrderColumn;
import jakarta.persistence.PrePersist;
import jakarta.persistence.PreUpdate;
import jakarta.persistence.Table;
import jakarta.persistence.Version;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.hibernate.annotations.BatchSize;

/**
 * A set of task CPU shares, with the usage reporting interval and the fixed cost of a request
 * ({@link IoCost}) of the nodes that enforce it: the
 * cluster default ({@code nodeId} null, seeded by the schema, always
 * present) or one data node's override (at most one per node, deleted with the node by
 * {@code TaskShareService.onNodeDeleting}, which audits it).
 *
 * <p>Not a {@code VersionedEntity}: {@code task_share_set} has no creation time. It keeps the
 * same server-generated UUID, {@code @Version} (the ETag) and update time.
 */
@Entity
@Table(name = "task_share_set")
class TaskShareSet {

    @Id
    private UUID id;

    /** The node this set overrides, or null for the cluster default. */
    @Column(name = "node_id", unique = true, updatable = false)
    private UUID nodeId;

    @Version
    @Column(nullable = false)
    private Long version;

    @Column(name = "updated_at", nullable = false)
    private Instant updatedAt;

    /** Seconds between the usage reports of the nodes that enforce this set. */
    @Column(name = "usage_report_interval_seconds", nullable = false)
    private int usageReportIntervalSeconds = DesiredConfig.DEFAULT_USAGE_REPORT_INTERVAL_SECONDS;

    /** The fixed cost of a read in the nodes' cost model, in bytes. */
    @Column(name = "read_per_io_bytes", nullable = false)
    private long readPerIoBytes = IoCost.DEFAULT_READ_PER_IO_BYTES;

    /** The fixed cost of a write in the nodes' cost model, in bytes. */
    @Column(name = "write_per_io_bytes", nullable = false)
    private long writePerIoBytes = IoCost.DEFAULT_WRITE_PER_IO_BYTES;

    /** The tasks in the order the administrator gave them; loaded for up to 64 sets in one query. */
    @ElementCollection
    @BatchSize(size = 64)
    @CollectionTable(name = "task_share", joinColumns = @JoinColumn(name = "set_id"))
    @OrderColumn(name = "position")
    private List<TaskShareEntry> tasks = new ArrayList<>();

    protected TaskShareSet() {
    }

    /** A new override for {@code nodeId}. */
    static TaskShareSet overrideFor(UUID nodeId) {
        TaskShareSet set = new TaskShareSet();
        set.id = UUID.randomUUID();
        set.nodeId = nodeId;
        return set;
    }

    @PrePersist
    @PreUpdate
    void touch() {
        updatedAt = Instant.now().truncatedTo(ChronoUnit.MICROS);
    }

    UUID getId() {
        return id;
    }

    UUID getNodeId() {
        return nodeId;
    }

    long getVersion() {
        return version == null ? 0 : version;
    }

    Instant getUpdatedAt() {
        return updatedAt;
    }

    List<TaskShareConfig> getTasks() {
        return tasks.stream().map(TaskShareEntry::toConfig).toList();
    }

    int getUsageReportIntervalSeconds() {
        return usageReportIntervalSeconds;
    }

    /** Sets the usage reporting interval; a change increments the version like any other field. */
    void setUsageReportIntervalSeconds(int seconds) {
        this.usageReportIntervalSeconds = seconds;
        touch();
    }

    IoCost getIoCost() {
        return new IoCost(readPerIoBytes, writePerIoBytes);
    }

    /** Sets the fixed cost of a request; a change increments the version like any other field. */
    void setIoCost(IoCost cost) {
        this.readPerIoBytes = cost.readPerIoBytes();
        this.writePerIoBytes = cost.writePerIoBytes();
        touch();
    }

    /**
     * Replaces the tasks. A new list rather than an edit in place, so that Hibernate deletes the
     * old rows before inserting the new ones and the (set, name) unique key never sees a
     * half-reordered set.
     */
    void setTasks(List<TaskShareConfig> configs) {
        tasks = new ArrayList<>(configs.stream().map(TaskShareEntry::of).toList());
        // The collection change increments the version; the update time is ours to move.
        touch();
    }
}
