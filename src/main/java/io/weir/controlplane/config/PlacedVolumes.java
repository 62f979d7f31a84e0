package io.weir.controlplane.config;

import io.weir.protocol.VolumeConfig;
import java.util.List;
import java.util.UUID;

/** The volumes placed on a data node, with their effective policies. Implemented by the volume feature. */
public interface PlacedVolumes {

    /** Volumes placed on {@code nodeId}, in a stable order (tenant, then volume name). */
    List<VolumeConfig> placedOn(UUID nodeId);
}
