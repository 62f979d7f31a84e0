package io.weir.controlplane.tenant;

import java.util.Collection;
import java.util.Map;
import java.util.UUID;

/**
 * The capacity of each tenant's volumes, which its per-GiB terms scale with. Implemented by the
 * volume feature.
 */
public interface TenantCapacity {

    /**
     * The sums over each tenant's volumes, read in one query.
     *
     * @param allocatedBytes the sum of their sizes
     * @param usedBytes the sum of the used bytes in force (each at most the volume's size)
     */
    record Capacity(long allocatedBytes, long usedBytes) {

        /** A tenant without volumes. */
        public static final Capacity NONE = new Capacity(0, 0);

        /** The capacity of {@code basis}. */
        public long of(io.weir.protocol.CapacityQos.CapacityBasis basis) {
            return basis == io.weir.protocol.CapacityQos.CapacityBasis.used ? usedBytes : allocatedBytes;
        }
    }

    /** The capacity of each of {@code tenantIds}; a tenant without volumes maps to {@link Capacity#NONE} or is left out. */
    Map<UUID, Capacity> capacities(Collection<UUID> tenantIds);
}
