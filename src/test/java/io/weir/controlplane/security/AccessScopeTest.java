package io.weir.controlplane.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.weir.controlplane.web.ApiException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.core.authority.AuthorityUtils;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

/** Who {@link AccessScope} takes the caller to be, inside and outside requests. */
class AccessScopeTest {

    private final AccessScope scope = new AccessScope();

    @AfterEach
    void clear() {
        RequestContextHolder.resetRequestAttributes();
        SecurityContextHolder.clearContext();
    }

    @Test
    void outsideARequestTheCallerIsTheSystem() {
        assertThat(scope.current()).isEqualTo(WeirPrincipal.SYSTEM);
    }

    @Test
    void anAnonymousCallerInsideARequestIsNotTakenForTheSystem() {
        RequestContextHolder.setRequestAttributes(new ServletRequestAttributes(new MockHttpServletRequest()));
        assertThatThrownBy(scope::current).isInstanceOfSatisfying(ApiException.class,
                e -> assertThat(e.status().value()).isEqualTo(401));
        SecurityContextHolder.getContext().setAuthentication(new AnonymousAuthenticationToken("key", "anonymousUser",
                AuthorityUtils.createAuthorityList("ROLE_ANONYMOUS")));
        assertThatThrownBy(scope::current).isInstanceOf(ApiException.class);
        assertThatThrownBy(() -> scope.requireAdmin("do this")).isInstanceOf(ApiException.class);
    }

    @Test
    void anAuthenticatedCallerIsItselfInsideAndOutsideRequests() {
        WeirPrincipal viewer = new WeirPrincipal(WeirPrincipal.Kind.TOKEN, "id", "v", Role.VIEWER, null, null);
        assertThat(TestPrincipals.callAs(viewer, scope::current)).isEqualTo(viewer);
        RequestContextHolder.setRequestAttributes(new ServletRequestAttributes(new MockHttpServletRequest()));
        assertThat(TestPrincipals.callAs(viewer, scope::current)).isEqualTo(viewer);
    }
}
