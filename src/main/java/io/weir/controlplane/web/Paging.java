package io.weir.controlplane.web;

import org.springframework.data.domain.PageRequest;
import org.springframework.data.domain.Pageable;
import org.springframework.data.domain.Sort;

/** Validated paging parameters, always in the stable order of the list endpoints. */
public final class Paging {

    /** Page size when the caller gives none. */
    public static final int DEFAULT_SIZE = 50;

    /** Largest page size a caller may ask for; larger asks answer 400. */
    public static final int MAX_SIZE = 500;

    /** The stable order of every list: creation time, then id to break ties. */
    public static final Sort STABLE_ORDER = Sort.by("createdAt", "id");

    private Paging() {
    }

    /**
     * Largest offset (page × size) a list may start at: the databases's row offsets are Java
     * ints. Past it a request answers 400 naming {@code page}; no list is that long.
     */
    public static final long MAX_OFFSET = Integer.MAX_VALUE;

    /**
     * The page {@code page} of {@code size} items.
     *
     * @throws RequestValidationException naming {@code page} or {@code size} when one is out of
     *     range: {@code size} 1 to {@value #MAX_SIZE}, {@code page} 0 or more with
     *     {@code page * size} at most {@link #MAX_OFFSET}
     */
    public static Pageable of(int page, int size) {
        if (page < 0) {
            throw new RequestValidationException("page", "must be 0 or more, was " + page);
        }
        if (size < 1 || size > MAX_SIZE) {
            throw new RequestValidationException("size", "must be between 1 and " + MAX_SIZE + ", was " + size);
        }
        if ((long) page * size > MAX_OFFSET) {
            throw new RequestValidationException("page", "page * size must be at most " + MAX_OFFSET
                    + " (the largest list offset), was " + page + " * " + size);
        }
        return PageRequest.of(page, size, STABLE_ORDER);
    }
}
