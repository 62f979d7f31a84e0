package io.weir.controlplane.security;

import java.util.function.Supplier;
import org.springframework.security.core.context.SecurityContextHolder;

/** Runs code of a test as a given caller, without HTTP: for checks the filter chain would hide. */
public final class TestPrincipals {

    private TestPrincipals() {
    }

    /** Runs {@code work} with {@code principal} as the authenticated caller of this thread. */
    public static <T> T callAs(WeirPrincipal principal, Supplier<T> work) {
        var context = SecurityContextHolder.createEmptyContext();
        context.setAuthentication(new WeirAuthentication(principal));
        SecurityContextHolder.setContext(context);
        try {
            return work.get();
        } finally {
            SecurityContextHolder.clearContext();
        }
    }
}
