package io.weir.controlplane.tenant;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.security.Role;
import io.weir.controlplane.security.TestPrincipals;
import io.weir.controlplane.security.WeirPrincipal;
import io.weir.controlplane.support.IntegrationTest;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/**
 * The tenant list honours {@code AccessScope.listFilter}'s {@code visible}: a caller that may see
 * no tenant (a node token; the filter chain keeps it off this endpoint too) lists none, rather
 * than every tenant.
 */
class TenantListScopeTest extends IntegrationTest {

    @Autowired
    TenantController controller;

    @Test
    void aCallerThatMaySeeNoTenantListsNone() {
        api.post("/api/v1/tenants", "{\"name\":\"" + unique("scope") + "\"}");
        WeirPrincipal node = new WeirPrincipal(WeirPrincipal.Kind.TOKEN, UUID.randomUUID().toString(), "node-x",
                Role.NODE, null, UUID.randomUUID());
        var page = TestPrincipals.callAs(node, () -> controller.listTenants(null, 0, 20));
        assertThat(page.items()).isEmpty();
        assertThat(page.totalItems()).isZero();
        WeirPrincipal admin = new WeirPrincipal(WeirPrincipal.Kind.TOKEN, UUID.randomUUID().toString(), "a",
                Role.ADMIN, null, null);
        assertThat(TestPrincipals.callAs(admin, () -> controller.listTenants(null, 0, 20)).items()).isNotEmpty();
    }
}
