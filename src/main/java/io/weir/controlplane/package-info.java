/**
 * The control plane: a Spring Boot service, packaged by feature.
 *
 * <ul>
 *   <li>{@code tenant}, {@code policy}, {@code volume}, {@code node}, {@code taskshare}: the
 *       configuration resources, each with its entity, repository, service, controller and DTOs;
 *       {@code volume} also runs replicated volumes' failover.
 *   <li>{@code token}: API tokens (issue, list, revoke, verify) and the bootstrap admin token.
 *   <li>{@code security}: authentication (bearer tokens through the {@code BearerTokens} port,
 *       optional OIDC JWTs) and scoping of each request to its role and tenant.
 *   <li>{@code audit}: the audit log, written in the transaction of every change.
 *   <li>{@code pki}: the cluster CA, tenants' client certificates
 *       ({@code /tenants/{id}/client-certificates}) and data nodes' server certificates.
 *   <li>{@code config}: the global config revision, and the desired-config snapshot of a node
 *       stamped with the node's own desired revision.
 *   <li>{@code push}: the agent channel ({@code GET /api/v1/agent/connect}): pushes each node's
 *       snapshot to its agent on every replica, records acks, nacks and data-node reports, and
 *       hands the replication part of those reports to {@code node} and {@code volume}.
 *   <li>{@code usage}: per-volume, per-tenant and per-task usage history, from the agents'
 *       reports to {@code /api/v1/usage/...}.
 *   <li>{@code database}: the embedded PostgreSQL default and the base entity.
 *   <li>{@code web}: cross-cutting HTTP pieces: problem details, ETags, merge patch, paging,
 *       request size limit, and the validation constraints shared by the features.
 * </ul>
 *
 * <p>Features talk to each other through public services, events and ports, never through another
 * feature's repository or tables: a feature that must veto a delete elsewhere listens for that
 * feature's "deleting" event (for example {@code TenantDeleting}) inside the same transaction and
 * throws. The packages form no cycle ({@code ArchitectureTest}): where a package needs one that
 * depends on it, it owns a small interface that the other implements ({@code security.BearerTokens},
 * {@code node.NodeCredentials}, {@code node.NodeConnections}, {@code audit.ActorCredentials}, the
 * {@code config} ports, among them {@code config.ClusterTrust}, which {@code pki} implements).
 */
package io.weir.controlplane;
