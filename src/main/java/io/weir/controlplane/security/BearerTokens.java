package io.weir.controlplane.security;

import java.util.Optional;

/**
 * Verifies Weir's own bearer tokens: the port through which {@link BearerTokenFilter} asks the
 * token feature (which stores them) who a presented credential is. Owned here so that the
 * security layer depends on no feature; the token feature implements it.
 */
public interface BearerTokens {

    /**
     * The caller {@code credential} authenticates, if it names a stored, unexpired token whose
     * hash matches: a generated {@code weir_<id>_<secret>} text, or an operator-chosen bootstrap
     * text (any {@link TokenSecrets#wellFormed well-formed} credential). Reads the store on every
     * call and caches nothing, so a revoke is seen by the next request.
     */
    Optional<WeirPrincipal> authenticate(String credential);
}
