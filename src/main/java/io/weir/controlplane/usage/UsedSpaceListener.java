package io.weir.controlplane.usage;

import java.util.Map;
import java.util.UUID;

/**
 * Hears of the used bytes a data node reported for the volumes placed on it, inside the
 * transaction that stores them in the history ({@link UsedSpaceHistory#record}). Implemented by
 * the volume feature, which re-scales per-GiB terms of capacity basis {@code used}.
 */
public interface UsedSpaceListener {

    /**
     * @param nodeId the reporting node
     * @param usedBytes bytes allocated in each volume's file, by volume id (volumes placed on the node only)
     */
    void usedSpaceReported(UUID nodeId, Map<UUID, Long> usedBytes);
}
