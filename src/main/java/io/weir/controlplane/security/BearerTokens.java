package io.weir.controlplane.security;

import java.util.Collection;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

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

    /**
     * The PostgreSQL {@code NOTIFY} channel on which a revoke (a delete, also through the delete
     * of the token's tenant or node) is announced, with the token id as payload, when its
     * transaction commits: for holders of long-lived connections authenticated by a token (the
     * agent channel), on every replica. A hint only: {@link #unexpired} is the truth.
     */
    String REVOKED_CHANNEL = "weir_token_revoked";

    /**
     * Which of these token ids still name a stored, unexpired token: for long-lived connections
     * that were authenticated once, at their start, and must end when their token does.
     */
    Set<UUID> unexpired(Collection<UUID> tokenIds);
}
