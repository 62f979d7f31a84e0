package io.weir.support;

/** Sizes in bytes, for tests: {@code 4 * MiB}. */
public final class Bytes {

    /** 2^10 bytes. */
    public static final long KiB = 1L << 10;

    /** 2^20 bytes. */
    public static final long MiB = 1L << 20;

    /** 2^30 bytes. */
    public static final long GiB = 1L << 30;

    private Bytes() {
    }
}
