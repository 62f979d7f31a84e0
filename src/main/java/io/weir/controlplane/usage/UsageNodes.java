package io.weir.controlplane.usage;

import java.util.UUID;

/** Whether a data node exists: a port owned here and implemented by the node feature. */
public interface UsageNodes {

    boolean nodeExists(UUID nodeId);
}
