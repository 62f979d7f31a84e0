package io.weir.controlplane.config;

import io.weir.protocol.VolumeConfig;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/** The volumes placed on data nodes, with their effective policies. Implemented by the volume feature. */
public interface PlacedVolumes {

    /**
     * The volumes placed on each of {@code nodeIds}, read together (a push to every node must not
     * cost a query per node); a node without volumes maps to an empty list. Each list is in a
     * stable order: tenant, then volume name.
     */
    Map<UUID, List<VolumeConfig>> placedOnEach(Collection<UUID> nodeIds);

    /** Volumes placed on {@code nodeId}, in the order of {@link #placedOnEach}. */
    List<VolumeConfig> placedOn(UUID nodeId);
}
