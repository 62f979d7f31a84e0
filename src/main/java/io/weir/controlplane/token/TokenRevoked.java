package io.weir.controlplane.token;

import java.util.UUID;

/**
 * Published inside the transaction that revokes (deletes) a token; listeners that act on the
 * outcome listen after the commit.
 *
 * @param tokenId the revoked token's id
 * @param name its name
 */
record TokenRevoked(UUID tokenId, String name) {
}
