/**
 * The audit log: who changed what, when, with the resource before and after.
 *
 * <p>Every mutating service method calls {@link io.weir.controlplane.audit.AuditLog#record} inside
 * its own transaction ({@code MANDATORY} propagation enforces that), so an entry exists exactly
 * when its change was committed. {@code GET /api/v1/audit} serves the log, paginated and
 * filtered; a tenant-admin sees only its own tenant's entries.
 *
 * <p>An entry is refused (and its change rolled back) when the acting token was revoked while the
 * request ran; the token feature answers that through {@link
 * io.weir.controlplane.audit.ActorCredentials}, a port this package owns, so the log depends on no
 * feature.
 */
package io.weir.controlplane.audit;
