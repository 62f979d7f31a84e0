package io.weir.controlplane.web;

/**
 * Entity tags derived from the JPA {@code @Version} of a resource, and the {@code If-Match}
 * check that guards PUT, PATCH and DELETE against lost updates.
 *
 * <p>A tag is the version in quotes, {@code "3"}. {@code If-Match} may list several tags, may use
 * weak tags ({@code W/"3"}, compared by value) or {@code *}; an absent header is no precondition.
 */
public final class ETags {

    private ETags() {
    }

    public static String of(long version) {
        return "\"" + version + "\"";
    }

    /**
     * Throws 412 unless {@code ifMatch} is absent, {@code *}, or names {@code currentVersion}.
     *
     * @param ifMatch the raw {@code If-Match} header, or null
     */
    public static void checkIfMatch(String ifMatch, long currentVersion) {
        if (ifMatch == null || ifMatch.isBlank()) {
            return;
        }
        String current = of(currentVersion);
        for (String candidate : ifMatch.split(",")) {
            String tag = candidate.trim();
            if (tag.startsWith("W/")) {
                tag = tag.substring(2);
            }
            if (tag.equals("*") || tag.equals(current)) {
                return;
            }
        }
        throw ApiException.preconditionFailed(
                "If-Match " + ifMatch.trim() + " does not match the current version " + current);
    }
}
