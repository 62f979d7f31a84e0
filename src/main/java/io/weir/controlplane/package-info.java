/**
 * The control plane: a Spring Boot service, packaged by feature.
 *
 * <ul>
 *   <li>{@code tenant}, {@code policy}, {@code volume}, {@code node}, {@code taskshare}: the
 *       configuration resources, each with its entity, repository, service, controller and DTOs.
 *   <li>{@code config}: the global config revision and the desired-config snapshot of a node.
 *   <li>{@code database}: the embedded PostgreSQL default and the base entity.
 *   <li>{@code web}: cross-cutting HTTP pieces: problem details, ETags, merge patch, paging,
 *       request size limit, and the validation constraints shared by the features.
 * </ul>
 *
 * <p>Features talk to each other through public services and events, never through another
 * feature's repository: a feature that must veto a delete elsewhere listens for that feature's
 * "deleting" event (for example {@code TenantDeleting}) inside the same transaction and throws.
 */
package io.weir.controlplane;
