package io.weir.controlplane.database;

import jakarta.persistence.Column;
import jakarta.persistence.Id;
import jakarta.persistence.MappedSuperclass;
import jakarta.persistence.PrePersist;
import jakarta.persistence.PreUpdate;
import jakarta.persistence.Version;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.UUID;

/**
 * Base of every configuration entity: a server-generated UUID, the optimistic-lock version that
 * the API exposes as the ETag, and creation and update times.
 *
 * <p>Times are truncated to microseconds, PostgreSQL's precision, so that what a create returns
 * equals what a later read returns.
 */
@MappedSuperclass
public abstract class VersionedEntity {

    @Id
    private UUID id;

    /** Null until first persisted, which is how Spring Data tells a new entity from a stored one. */
    @Version
    @Column(nullable = false)
    private Long version;

    @Column(name = "created_at", nullable = false, updatable = false)
    private Instant createdAt;

    @Column(name = "updated_at", nullable = false)
    private Instant updatedAt;

    protected VersionedEntity() {
        this.id = UUID.randomUUID();
    }

    /** For entities whose id is fixed before they are stored, such as a token whose secret names it. */
    protected VersionedEntity(UUID id) {
        this.id = id;
    }

    @PrePersist
    void onCreate() {
        createdAt = Instant.now().truncatedTo(ChronoUnit.MICROS);
        updatedAt = createdAt;
    }

    @PreUpdate
    void onUpdate() {
        updatedAt = Instant.now().truncatedTo(ChronoUnit.MICROS);
    }

    /**
     * Marks the entity changed so that the next flush updates its row, which increments the
     * version with the usual optimistic check. For changes Hibernate does not version by itself,
     * such as a collection excluded from optimistic locking.
     */
    protected void touch() {
        Instant now = Instant.now().truncatedTo(ChronoUnit.MICROS);
        updatedAt = now.equals(updatedAt) ? now.plus(1, ChronoUnit.MICROS) : now;
    }

    public UUID getId() {
        return id;
    }

    public long getVersion() {
        return version == null ? 0 : version;
    }

    public Instant getCreatedAt() {
        return createdAt;
    }

    public Instant getUpdatedAt() {
        return updatedAt;
    }
}
