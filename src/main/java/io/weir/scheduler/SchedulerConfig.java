package io.weir.scheduler;

import io.weir.protocol.QosSettings;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * An immutable, validated description of everything a {@link HierarchicalScheduler} enforces:
 * the tasks of the root (CPU) scheduler, the tenants and the volumes of the foreground flow
 * hierarchy, and each one's policy.
 *
 * <p>A whole configuration is applied atomically by {@link HierarchicalScheduler#reconfigure};
 * there is no partial update. Build one with {@link #builder()}:
 *
 * <pre>{@code
 * SchedulerConfig config = SchedulerConfig.builder()
 *     .defaultTasks()                                   // foreground, gc, flush, replication, scrub
 *     .tenant(TenantSpec.of("t1").withWeight(200).withMaxIops(50_000))
 *     .volume(VolumeSpec.of("v1", "t1").withWeight(100).withMinIops(500).withMaxIops(5_000))
 *     .build();
 * }</pre>
 *
 * <h2>Conventions</h2>
 * <ul>
 *   <li>Ids are opaque strings (the control plane uses UUID strings).</li>
 *   <li>Weights are integers in [{@value QosSettings#MIN_WEIGHT}, {@value QosSettings#MAX_WEIGHT}], default {@value #DEFAULT_WEIGHT}.</li>
 *   <li><b>{@code 0} means unlimited</b> (or "no reservation", "no burst") for every limit field.
 *       The wire format's {@code null} maps to {@code 0}. Primitive longs keep the hot path free
 *       of boxing.</li>
 *   <li>Rates are per second: IOPS or bytes/s.</li>
 *   <li>The QoS rules (weight range, {@code minIops <= maxIops}, a burst needs its maximum and is
 *       strictly above it, a tenant's {@code maxIops} carries its volumes' reservations) are those
 *       of {@link QosSettings}, the one contract the control plane checks too: a snapshot the
 *       control plane accepts is one this class accepts.</li>
 * </ul>
 */
public final class SchedulerConfig {

    /** Name of the task that serves client IO through the flow hierarchy; always present. */
    public static final String FOREGROUND = "foreground";

    /** Smallest allowed weight ({@link QosSettings#MIN_WEIGHT}). */
    public static final int MIN_WEIGHT = QosSettings.MIN_WEIGHT;

    /** Largest allowed weight ({@link QosSettings#MAX_WEIGHT}). */
    public static final int MAX_WEIGHT = QosSettings.MAX_WEIGHT;

    /** Weight of a tenant or volume that does not set one ({@link QosSettings#DEFAULT_WEIGHT}). */
    public static final int DEFAULT_WEIGHT = QosSettings.DEFAULT_WEIGHT;

    /** Queue bound of a volume or background task that does not set one. */
    public static final int DEFAULT_QUEUE_CAPACITY = 1024;

    private final List<TaskSpec> tasks;
    private final List<TenantSpec> tenants;
    private final List<VolumeSpec> volumes;

    private SchedulerConfig(List<TaskSpec> tasks, List<TenantSpec> tenants, List<VolumeSpec> volumes) {
        this.tasks = Collections.unmodifiableList(new ArrayList<>(tasks));
        this.tenants = Collections.unmodifiableList(new ArrayList<>(tenants));
        this.volumes = Collections.unmodifiableList(new ArrayList<>(volumes));
    }

    /** Returns a new builder. */
    public static Builder builder() {
        return new Builder();
    }

    /** The tasks, in declaration order; the foreground task is among them. */
    public List<TaskSpec> tasks() {
        return tasks;
    }

    /** The tenants, in declaration order. */
    public List<TenantSpec> tenants() {
        return tenants;
    }

    /** The volumes, in declaration order. */
    public List<VolumeSpec> volumes() {
        return volumes;
    }

    /** Returns a builder preloaded with this configuration, for deriving a changed copy. */
    public Builder toBuilder() {
        Builder b = new Builder();
        tasks.forEach(b::task);
        tenants.forEach(b::tenant);
        volumes.forEach(b::volume);
        return b;
    }

    /**
     * This configuration with every tenant's and volume's limits (max and burst IOPS and bytes/s)
     * removed; weights, reservations and the rest kept. For a node that stops: what is still
     * queued belongs to connections it has cut, and waiting for it at their limits only delays
     * the stop.
     */
    public SchedulerConfig withoutLimits() {
        Builder b = toBuilder();
        tenants.forEach(t -> b.tenant(new TenantSpec(t.id(), t.weight(), 0, 0, 0, 0)));
        volumes.forEach(v -> b.volume(new VolumeSpec(v.id(), v.tenantId(), v.weight(), v.minIops(), 0, 0, 0, 0,
                v.costModel(), v.queueCapacity())));
        return b.build();
    }

    @Override
    public String toString() {
        return "SchedulerConfig{tasks=" + tasks + ", tenants=" + tenants + ", volumes=" + volumes + '}';
    }

    // ------------------------------------------------------------------------------------------

    /** The curve of a {@link DynamicShare} between its thresholds. */
    public enum Curve {
        /** {@code share = low + (high - low) * x}, where {@code x = (u - t1) / (t2 - t1)}. */
        LINEAR,
        /** {@code share = low * (high / low)^x}: geometric interpolation, slow start then steep. */
        EXPONENTIAL
    }

    /**
     * A task share that follows a utilization signal supplied by the data node (US 9,600,337),
     * for example the fill level of the write buffer for the flush task.
     *
     * @param t1 utilization at or below which the share is {@code low}
     * @param t2 utilization at or above which the share is {@code high}; {@code t2 > t1}
     * @param low share below {@code t1}; {@code > 0}
     * @param high share above {@code t2}; {@code > 0}
     * @param curve how the share ramps between {@code t1} and {@code t2}
     */
    public record DynamicShare(double t1, double t2, double low, double high, Curve curve) {
        public DynamicShare {
            Objects.requireNonNull(curve, "curve");
            if (!(t2 > t1)) {
                throw new IllegalArgumentException("dynamic share needs t1 < t2: " + t1 + ", " + t2);
            }
            if (!(low > 0) || !(high > 0) || Double.isInfinite(low) || Double.isInfinite(high)) {
                throw new IllegalArgumentException("dynamic share low/high must be finite and > 0");
            }
        }

        /** Returns the share for utilization {@code u}. */
        public double shareAt(double u) {
            if (!(u > t1)) {
                return low;
            }
            if (u >= t2) {
                return high;
            }
            double x = (u - t1) / (t2 - t1);
            return curve == Curve.LINEAR ? low + (high - low) * x : low * Math.pow(high / low, x);
        }
    }

    /**
     * A task of the root scheduler: a consumer of CPU time.
     *
     * @param name unique name; {@link #FOREGROUND} is the client-IO task
     * @param share proportional CPU share (first currency); {@code > 0}. When {@code dynamic} is
     *     set, the dynamic curve decides instead and this value is unused
     * @param dynamic optional utilization-driven share, or null
     * @param queueCapacity bound of the task's own queue (background tasks only); {@code >= 1}
     */
    public record TaskSpec(String name, double share, DynamicShare dynamic, int queueCapacity) {
        public TaskSpec {
            Objects.requireNonNull(name, "name");
            if (!(share > 0) || Double.isInfinite(share)) {
                throw new IllegalArgumentException("task '" + name + "' share must be finite and > 0: " + share);
            }
            if (queueCapacity < 1) {
                throw new IllegalArgumentException("task '" + name + "' queueCapacity must be >= 1");
            }
        }

        /** A task with a static share and the default queue bound. */
        public static TaskSpec of(String name, double share) {
            return new TaskSpec(name, share, null, DEFAULT_QUEUE_CAPACITY);
        }

        /** Returns a copy whose share follows {@code dynamic}. */
        public TaskSpec withDynamic(DynamicShare dynamic) {
            return new TaskSpec(name, share, dynamic, queueCapacity);
        }

        /** Returns a copy with queue bound {@code capacity}. */
        public TaskSpec withQueueCapacity(int capacity) {
            return new TaskSpec(name, share, dynamic, capacity);
        }

        /** True for the client-IO task. */
        public boolean isForeground() {
            return FOREGROUND.equals(name);
        }
    }

    /**
     * A tenant (folder): a node of the flow hierarchy that contains volumes. Its limits apply to
     * the aggregate of its volumes.
     *
     * @param id unique id
     * @param weight proportional share among tenants, {@code [1, 10000]}
     * @param maxIops maximum sustained IOPS of all its volumes together; 0 = unlimited
     * @param burstIops peak IOPS while spending burst credit; 0 = no bursting; else {@code > maxIops}
     * @param maxBytesPerSec maximum sustained bytes/s; 0 = unlimited
     * @param burstBytesPerSec peak bytes/s while spending burst credit; 0 = no bursting
     */
    public record TenantSpec(String id, int weight, long maxIops, long burstIops, long maxBytesPerSec,
            long burstBytesPerSec) {
        public TenantSpec {
            Objects.requireNonNull(id, "id");
            QosSettings.ofScheduler(weight, 0, maxIops, burstIops, maxBytesPerSec, burstBytesPerSec)
                    .requireValid("tenant '" + id + "'");
        }

        /** An unlimited tenant with the default weight. */
        public static TenantSpec of(String id) {
            return new TenantSpec(id, DEFAULT_WEIGHT, 0, 0, 0, 0);
        }

        public TenantSpec withWeight(int w) {
            return new TenantSpec(id, w, maxIops, burstIops, maxBytesPerSec, burstBytesPerSec);
        }

        public TenantSpec withMaxIops(long v) {
            return new TenantSpec(id, weight, v, burstIops, maxBytesPerSec, burstBytesPerSec);
        }

        public TenantSpec withBurstIops(long v) {
            return new TenantSpec(id, weight, maxIops, v, maxBytesPerSec, burstBytesPerSec);
        }

        public TenantSpec withMaxBytesPerSec(long v) {
            return new TenantSpec(id, weight, maxIops, burstIops, v, burstBytesPerSec);
        }

        public TenantSpec withBurstBytesPerSec(long v) {
            return new TenantSpec(id, weight, maxIops, burstIops, maxBytesPerSec, v);
        }
    }

    /**
     * A volume: one flow of the foreground hierarchy, with a FIFO queue and a flow counter.
     * Parameters follow dmclock's vocabulary.
     *
     * @param id unique id; also the export name on the data node
     * @param tenantId the containing tenant, which must be configured
     * @param weight proportional share among the tenant's volumes, {@code [1, 10000]}
     * @param minIops reservation (mClock minimum): IOPS served ahead of weight-based choice while
     *     the volume is behind; 0 = none; must not exceed {@code maxIops} when both are set
     * @param maxIops maximum sustained IOPS (limit); 0 = unlimited
     * @param burstIops peak IOPS while spending burst credit; 0 = no bursting
     * @param maxBytesPerSec maximum sustained bytes/s; 0 = unlimited
     * @param burstBytesPerSec peak bytes/s while spending burst credit; 0 = no bursting
     * @param costModel how a request's cost (second currency) is computed; default
     *     {@link CostModel#bytes()}
     * @param queueCapacity bound of the volume's queue; a submit past it fails with
     *     {@link QueueFullException}
     */
    public record VolumeSpec(String id, String tenantId, int weight, long minIops, long maxIops, long burstIops,
            long maxBytesPerSec, long burstBytesPerSec, CostModel costModel, int queueCapacity) {
        public VolumeSpec {
            Objects.requireNonNull(id, "id");
            Objects.requireNonNull(tenantId, "tenantId");
            Objects.requireNonNull(costModel, "costModel");
            QosSettings.ofScheduler(weight, minIops, maxIops, burstIops, maxBytesPerSec, burstBytesPerSec)
                    .requireValid("volume '" + id + "'");
            if (queueCapacity < 1) {
                throw new IllegalArgumentException("volume '" + id + "' queueCapacity must be >= 1");
            }
        }

        /** An unlimited volume with the default weight, cost model and queue bound. */
        public static VolumeSpec of(String id, String tenantId) {
            return new VolumeSpec(id, tenantId, DEFAULT_WEIGHT, 0, 0, 0, 0, 0, CostModel.bytes(), DEFAULT_QUEUE_CAPACITY);
        }

        public VolumeSpec withTenant(String t) {
            return new VolumeSpec(id, t, weight, minIops, maxIops, burstIops, maxBytesPerSec, burstBytesPerSec, costModel, queueCapacity);
        }

        public VolumeSpec withWeight(int w) {
            return new VolumeSpec(id, tenantId, w, minIops, maxIops, burstIops, maxBytesPerSec, burstBytesPerSec, costModel, queueCapacity);
        }

        public VolumeSpec withMinIops(long v) {
            return new VolumeSpec(id, tenantId, weight, v, maxIops, burstIops, maxBytesPerSec, burstBytesPerSec, costModel, queueCapacity);
        }

        public VolumeSpec withMaxIops(long v) {
            return new VolumeSpec(id, tenantId, weight, minIops, v, burstIops, maxBytesPerSec, burstBytesPerSec, costModel, queueCapacity);
        }

        public VolumeSpec withBurstIops(long v) {
            return new VolumeSpec(id, tenantId, weight, minIops, maxIops, v, maxBytesPerSec, burstBytesPerSec, costModel, queueCapacity);
        }

        public VolumeSpec withMaxBytesPerSec(long v) {
            return new VolumeSpec(id, tenantId, weight, minIops, maxIops, burstIops, v, burstBytesPerSec, costModel, queueCapacity);
        }

        public VolumeSpec withBurstBytesPerSec(long v) {
            return new VolumeSpec(id, tenantId, weight, minIops, maxIops, burstIops, maxBytesPerSec, v, costModel, queueCapacity);
        }

        public VolumeSpec withCostModel(CostModel m) {
            return new VolumeSpec(id, tenantId, weight, minIops, maxIops, burstIops, maxBytesPerSec, burstBytesPerSec, m, queueCapacity);
        }

        /** Shorthand for {@code withCostModel(CostModel.bytes(minChargeBytes))}. */
        public VolumeSpec withMinChargeBytes(long minChargeBytes) {
            return withCostModel(CostModel.bytes(minChargeBytes));
        }

        public VolumeSpec withQueueCapacity(int c) {
            return new VolumeSpec(id, tenantId, weight, minIops, maxIops, burstIops, maxBytesPerSec, burstBytesPerSec, costModel, c);
        }
    }

    // ------------------------------------------------------------------------------------------

    /** Collects tasks, tenants and volumes, then validates them together in {@link #build()}. */
    public static final class Builder {
        private final Map<String, TaskSpec> tasks = new LinkedHashMap<>();
        private final Map<String, TenantSpec> tenants = new LinkedHashMap<>();
        private final Map<String, VolumeSpec> volumes = new LinkedHashMap<>();

        private Builder() {
        }

        /**
         * Adds the default task set: foreground 60, flush 15, gc 10, replication 10, scrub 5.
         * Existing tasks of the same name are replaced.
         */
        public Builder defaultTasks() {
            task(TaskSpec.of(FOREGROUND, 60));
            task(TaskSpec.of("flush", 15));
            task(TaskSpec.of("gc", 10));
            task(TaskSpec.of("replication", 10));
            task(TaskSpec.of("scrub", 5));
            return this;
        }

        /** Adds or replaces a task. */
        public Builder task(TaskSpec spec) {
            tasks.put(spec.name(), spec);
            return this;
        }

        /** Shorthand for {@code task(TaskSpec.of(name, share))}. */
        public Builder task(String name, double share) {
            return task(TaskSpec.of(name, share));
        }

        /** Removes a task (the foreground task cannot be removed; {@link #build()} rejects that). */
        public Builder removeTask(String name) {
            tasks.remove(name);
            return this;
        }

        /** Adds or replaces a tenant. */
        public Builder tenant(TenantSpec spec) {
            tenants.put(spec.id(), spec);
            return this;
        }

        /** Removes a tenant; its volumes must be removed too. */
        public Builder removeTenant(String id) {
            tenants.remove(id);
            return this;
        }

        /** Adds or replaces a volume. */
        public Builder volume(VolumeSpec spec) {
            volumes.put(spec.id(), spec);
            return this;
        }

        /** Removes a volume. */
        public Builder removeVolume(String id) {
            volumes.remove(id);
            return this;
        }

        /**
         * Validates and builds. A missing foreground task is added with share 1 when there are no
         * tasks at all; otherwise its absence is an error.
         *
         * @throws IllegalArgumentException if a volume names an unknown tenant, the foreground task
         *     is missing, or a tenant's {@code maxIops} is below the sum of its volumes' {@code minIops}
         *     (a reservation that the tenant's own limit would make infeasible)
         */
        public SchedulerConfig build() {
            if (tasks.isEmpty()) {
                tasks.put(FOREGROUND, TaskSpec.of(FOREGROUND, 1));
            }
            if (!tasks.containsKey(FOREGROUND)) {
                throw new IllegalArgumentException("the '" + FOREGROUND + "' task is required");
            }
            Map<String, Long> minByTenant = new HashMap<>();
            for (VolumeSpec v : volumes.values()) {
                if (!tenants.containsKey(v.tenantId())) {
                    throw new IllegalArgumentException("volume '" + v.id() + "' names unknown tenant '" + v.tenantId() + "'");
                }
                minByTenant.merge(v.tenantId(), v.minIops(), QosSettings::addReservation);
            }
            for (TenantSpec t : tenants.values()) {
                QosSettings.checkReservations(t.maxIops(), minByTenant.getOrDefault(t.id(), 0L)).ifPresent(v -> {
                    throw new IllegalArgumentException("tenant '" + t.id() + "': " + v.message());
                });
            }
            return new SchedulerConfig(new ArrayList<>(tasks.values()), new ArrayList<>(tenants.values()),
                    new ArrayList<>(volumes.values()));
        }
    }
}
