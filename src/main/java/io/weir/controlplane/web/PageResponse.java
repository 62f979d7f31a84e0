package io.weir.controlplane.web;

import io.swagger.v3.oas.annotations.media.Schema;
import java.util.List;
import java.util.function.Function;
import org.springframework.data.domain.Page;

/**
 * One page of a list. Lists have a stable order (creation time, then id), so walking the pages
 * while nothing is created sees every item exactly once.
 *
 * @param items the items on this page
 * @param page zero-based page number
 * @param size the page size that was asked for
 * @param totalItems how many items match in all
 * @param totalPages how many pages of this size there are
 */
@Schema(description = "One page of a list, in a stable order.")
public record PageResponse<T>(List<T> items, int page, int size, long totalItems, int totalPages) {

    public static <E, T> PageResponse<T> of(Page<E> page, Function<? super E, ? extends T> mapper) {
        return new PageResponse<>(page.getContent().stream().<T>map(mapper).toList(),
                page.getNumber(), page.getSize(), page.getTotalElements(), page.getTotalPages());
    }
}
