package io.weir.controlplane.web;

/**
 * Entity tags derived from the JPA {@code @Version} of a resource, and the {@code If-Match}
 * check that guards PUT, PATCH and DELETE against lost updates.
 *
 * <p>A tag is the version in quotes, {@code "3"}, or for a representation with parts derived from
 * other rows the version and a digest of it, {@code "3.9f2c41d0"} (either names version 3 in
 * {@code If-Match}). {@code If-Match} may list several tags or be
 * {@code *}; an absent header is no precondition. It uses the strong comparison (RFC 9110,
 * 13.1.1), so a weak tag ({@code W/"3"}) never matches, not even the current version's: a write
 * guarded by one answers 412.
 * A header that is present but names nothing (empty, blanks, only commas) answers 400: it is not
 * the same as no header, and reading it as "absent" would let a write through that its client
 * meant to guard.
 */
public final class ETags {

    /** The header's name, as a 400 names it. */
    private static final String HEADER = "If-Match";

    private ETags() {
    }

    public static String of(long version) {
        return "\"" + version + "\"";
    }

    /**
     * A tag for a representation with parts derived from other rows (a tenant's effective limits
     * follow its volumes, a volume's effective policy its policy, a node's status its agent): the
     * version, then a digest of the representation ({@code "3.9f2c41d0"}), so that a conditional
     * GET is not answered 304 for a representation that changed at the same version. A write's
     * {@code If-Match} compares the version only ({@link #checkIfMatch(String, long)}).
     */
    public static String of(long version, byte[] representation) {
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(representation);
        return "\"" + version + "." + String.format("%08x", crc.getValue()) + "\"";
    }

    /**
     * A tag for a representation that can come from more than one stored row (such as a node's
     * task shares, which are either its override or the cluster default): the qualifier names
     * the row, so two rows at the same version never share a tag.
     */
    public static String of(String qualifier, long version) {
        return "\"" + qualifier + "-" + version + "\"";
    }

    /**
     * Throws 412 unless {@code ifMatch} is absent, {@code *}, or names {@code currentVersion}.
     *
     * @param ifMatch the raw {@code If-Match} header, or null
     */
    public static void checkIfMatch(String ifMatch, long currentVersion) {
        String current = of(currentVersion);
        String withDigest = "\"" + currentVersion + ".";
        checkIfMatch(ifMatch, tag -> tag.equals(current) || tag.startsWith(withDigest) && tag.endsWith("\"")
                && tag.indexOf('"', withDigest.length()) == tag.length() - 1, current);
    }

    /**
     * Throws 412 unless {@code ifMatch} is absent, {@code *}, or names {@code current}, a tag, as a
     * strong tag (a weak one never matches); 400 if it is present but lists no tag.
     */
    public static void checkIfMatch(String ifMatch, String current) {
        checkIfMatch(ifMatch, current::equals, current);
    }

    private static void checkIfMatch(String ifMatch, java.util.function.Predicate<String> matches, String current) {
        if (ifMatch == null) {
            return;
        }
        if (ifMatch.replace(',', ' ').isBlank()) {
            throw new RequestValidationException(HEADER, "must name at least one entity tag (or *) when present");
        }
        for (String candidate : ifMatch.split(",")) {
            String tag = candidate.trim();
            if (tag.isEmpty()) {
                continue;
            }
            if (tag.equals("*") || matches.test(tag)) {
                return;
            }
        }
        throw ApiException.preconditionFailed(
                "If-Match " + Problems.bounded(ifMatch.trim()) + " does not match the current version " + current);
    }
}
