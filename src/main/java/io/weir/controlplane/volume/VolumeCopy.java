package io.weir.controlplane.volume;

import io.swagger.v3.oas.annotations.media.Schema;
import io.weir.protocol.AgentMessage;
import java.util.UUID;

/**
 * One copy of a volume, on one node, as the REST volume shows it.
 *
 * @param nodeId the node that holds it
 * @param state as the volume's primary last reported it (a new copy starts {@code outOfSync})
 * @param inSync whether the nodes count it in the in-sync set: it changes only with the primary's
 *     reports of a higher sync sequence, a promotion, or when the copy is added
 * @param resyncRemainingBytes the bytes it still has to copy, as last reported; 0 in sync
 */
@Schema(name = "VolumeCopy", description = "One copy of a volume on one data node.")
public record VolumeCopy(
        @Schema(description = "The data node that holds the copy.") UUID nodeId,
        @Schema(description = "The copy's state as the volume's primary last reported it: inSync (holds every "
                + "acknowledged write), resyncing (receives new writes and catches up), outOfSync (missing writes; a new "
                + "copy starts so and is copied in full).") AgentMessage.CopyState state,
        @Schema(description = "Whether the copy counts in the in-sync set the nodes are told: writes are acknowledged "
                + "once every in-sync copy has them, and only an in-sync copy can be promoted.") boolean inSync,
        @Schema(description = "Bytes the copy still has to copy, as last reported; 0 in sync.") long resyncRemainingBytes) {
}
