/**
 * The audit log: who changed what, when, with the resource before and after.
 *
 * <p>Every mutating service method calls {@link io.weir.controlplane.audit.AuditLog#record} inside
 * its own transaction ({@code MANDATORY} propagation enforces that), so an entry exists exactly
 * when its change was committed. {@code GET /api/v1/audit} serves the log, paginated and
 * filtered; a tenant-admin sees only its own tenant's entries.
 */
package io.weir.controlplane.audit;
