package io.weir.controlplane.audit;

import io.weir.controlplane.security.WeirPrincipal;

/**
 * Whether the credential an actor authenticated with still stands: the port through which
 * {@link AuditLog} makes sure a change of a revoked token never commits. Owned here, implemented
 * by the token feature (which owns the tokens' table), so the audit log reads no other feature's
 * tables.
 */
public interface ActorCredentials {

    /**
     * Whether the token {@code actor} authenticated with still exists and is unexpired, and if so
     * keeps it so (a row lock that a revoke waits for) until the caller's transaction ends.
     * Called only for actors of {@link WeirPrincipal.Kind#TOKEN}, inside the change's transaction.
     */
    boolean holdIfValid(WeirPrincipal actor);
}
