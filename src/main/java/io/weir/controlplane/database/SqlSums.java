package io.weir.controlplane.database;

/**
 * SQL for sums that never break a query: PostgreSQL sums bigint columns as numeric, and a sum
 * past a bigint (stored extremes, or many large values each valid alone) read back as a
 * {@code long} fails the whole query for every caller. These sums saturate at the largest bigint
 * instead. Used by usage queries, tenant capacity and reservation checks.
 */
public final class SqlSums {

    /** Largest bigint. */
    private static final String BIGINT_MAX = "9223372036854775807";

    private SqlSums() {
    }

    /**
     * {@code sum(expression)} saturated to a bigint; 0 over no rows or only NULLs ({@code LEAST}
     * ignores a NULL, so the sum is coalesced first).
     */
    public static String sum(String expression) {
        return "LEAST(coalesce(sum(" + expression + "), 0), " + BIGINT_MAX + ")::bigint";
    }
}
