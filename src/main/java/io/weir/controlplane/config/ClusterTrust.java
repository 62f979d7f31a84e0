package io.weir.controlplane.config;

import io.weir.protocol.TlsConfig;
import java.util.Collection;
import java.util.UUID;

/**
 * The cluster PKI as the nodes enforce it, for desired-config snapshots. Implemented by the pki
 * feature.
 *
 * <p>Its writers (a client certificate issued or revoked) bump the config revision in their
 * transaction, so each node's snapshot, and its revision, follow.
 */
public interface ClusterTrust {

    /**
     * The CA certificates, the valid client certificates of {@code tenantIds} and their kept
     * revoked ones, read in one query in the caller's transaction, lists ordered by serial.
     */
    TlsConfig forTenants(Collection<UUID> tenantIds);
}
