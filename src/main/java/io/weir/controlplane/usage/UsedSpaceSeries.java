package io.weir.controlplane.usage;

import io.swagger.v3.oas.annotations.media.Schema;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * The used bytes of a volume over a range, as its data nodes reported them.
 *
 * @param volumeId the volume
 * @param from start of the range (inclusive)
 * @param to end of the range (exclusive)
 * @param points each change a node reported, oldest first
 */
@Schema(name = "UsedSpaceSeries", description = "A volume's used bytes (allocated extents of its file) as its data nodes "
        + "reported them: one point per change per node, oldest first, at most 10000 (the newest).")
public record UsedSpaceSeries(UUID volumeId, Instant from, Instant to, List<UsedSpaceHistory.Point> points) {
}
