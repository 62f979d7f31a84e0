package io.weir.controlplane.node;

import java.util.UUID;

/**
 * Issues the bearer token of a data node just registered: the port through which
 * {@link NodeService} asks the token feature for it. Owned here, so the node feature does not
 * depend on the token feature (which depends on this one, to check the nodes it binds tokens to).
 */
public interface NodeCredentials {

    /**
     * Issues a node token for {@code nodeId}, in the caller's transaction, recorded in the audit
     * log like any token.
     *
     * @return the secret, to be shown once
     */
    String issueForNode(UUID nodeId);
}
