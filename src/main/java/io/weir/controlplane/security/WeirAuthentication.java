package io.weir.controlplane.security;

import java.util.ArrayList;
import java.util.List;
import org.springframework.security.authentication.AbstractAuthenticationToken;
import org.springframework.security.core.GrantedAuthority;
import org.springframework.security.core.authority.SimpleGrantedAuthority;

/**
 * An authenticated request: a {@link WeirPrincipal} and its authorities, the role's
 * {@code ROLE_*} plus {@link #CLUSTER_READ} for callers that see cluster-wide resources.
 * Holds no credentials: the bearer secret is dropped as soon as it is verified.
 */
final class WeirAuthentication extends AbstractAuthenticationToken {

    /** Authority of callers that may read cluster-wide resources: admins and unbound viewers. */
    static final String CLUSTER_READ = "CLUSTER_READ";

    private final WeirPrincipal principal;

    WeirAuthentication(WeirPrincipal principal) {
        super(authorities(principal));
        this.principal = principal;
        setAuthenticated(true);
    }

    private static List<GrantedAuthority> authorities(WeirPrincipal p) {
        List<GrantedAuthority> list = new ArrayList<>();
        list.add(new SimpleGrantedAuthority(p.role().authority()));
        if (p.clusterWide()) {
            list.add(new SimpleGrantedAuthority(CLUSTER_READ));
        }
        return list;
    }

    @Override
    public Object getCredentials() {
        return null;
    }

    @Override
    public WeirPrincipal getPrincipal() {
        return principal;
    }

    @Override
    public String getName() {
        return principal.name();
    }
}
