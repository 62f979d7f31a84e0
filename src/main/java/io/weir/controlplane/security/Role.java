package io.weir.controlplane.security;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Arrays;

/**
 * What a caller may do.
 *
 * <ul>
 *   <li>{@link #ADMIN}: everything.
 *   <li>{@link #TENANT_ADMIN}: bound to one tenant; manages that tenant's volumes, reads its usage
 *       and audit entries, reads (never edits) the global policies. Anything of another tenant
 *       answers 404.
 *   <li>{@link #VIEWER}: read-only, bound to one tenant or to all of them.
 *   <li>{@link #NODE}: bound to one data node; opens the agent channel and reads only its own
 *       node's desired config.
 * </ul>
 */
public enum Role {
    ADMIN("admin"),
    TENANT_ADMIN("tenant-admin"),
    VIEWER("viewer"),
    NODE("node");

    private final String wireName;

    Role(String wireName) {
        this.wireName = wireName;
    }

    /** The name used in JSON, in the database and in JWT role claims. */
    @JsonValue
    public String wireName() {
        return wireName;
    }

    /** The Spring Security authority of this role, such as {@code ROLE_TENANT_ADMIN}. */
    public String authority() {
        return "ROLE_" + name();
    }

    /**
     * The role whose wire name is exactly {@code value}: no trimming, no case folding, so that
     * {@code "ADMIN"} or {@code "admin "} is refused rather than read as admin (in a body, a
     * query parameter, a JWT claim alike).
     */
    @JsonCreator
    public static Role fromWire(String value) {
        if (value == null) {
            return null;
        }
        return Arrays.stream(values()).filter(r -> r.wireName.equals(value)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException(
                        "unknown role '" + value + "'; one of admin, tenant-admin, viewer, node"));
    }
}
