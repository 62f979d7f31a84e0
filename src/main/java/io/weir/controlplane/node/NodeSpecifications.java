package io.weir.controlplane.node;

import jakarta.persistence.criteria.MapJoin;
import jakarta.persistence.criteria.Predicate;
import jakarta.persistence.criteria.Root;
import jakarta.persistence.criteria.Subquery;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.springframework.data.jpa.domain.Specification;

/**
 * The list filter of {@code GET /nodes}: name contains a fragment, and every label selector matches.
 *
 * <p>Label selectors cost one subquery whatever their number: the labels rows that match any
 * selector, grouped by node, keeping the nodes that matched as many rows as there are distinct
 * selectors. ({@code (node, key)} is the label table's primary key, so a node matches each
 * selector with at most one row, and two selectors of one key with different values can never
 * both match.) One join per selector, as before, made the planner's work grow exponentially.
 */
final class NodeSpecifications {

    private NodeSpecifications() {
    }

    /** The nodes among {@code ids} that carry every label of {@code selector} (all of them when it is empty). */
    static Specification<Node> amongCarrying(Collection<UUID> ids, Map<String, String> selector) {
        Specification<Node> carrying = matching(null, List.copyOf(selector.entrySet()));
        return (root, query, cb) -> cb.and(root.get("id").in(ids), carrying.toPredicate(root, query, cb));
    }

    static Specification<Node> matching(String nameContains, List<Map.Entry<String, String>> labels) {
        Set<Map.Entry<String, String>> selectors = new LinkedHashSet<>(labels);
        return (root, query, cb) -> {
            List<Predicate> predicates = new ArrayList<>();
            if (nameContains != null && !nameContains.isEmpty()) {
                predicates.add(cb.like(root.get("name"), "%" + escapeLike(nameContains) + "%", '\\'));
            }
            if (!selectors.isEmpty()) {
                Subquery<UUID> matching = query.subquery(UUID.class);
                Root<Node> node = matching.from(Node.class);
                MapJoin<Node, String, String> label = node.joinMap("labels");
                Predicate anySelector = cb.or(selectors.stream()
                        .map(sel -> cb.and(cb.equal(label.key(), sel.getKey()), cb.equal(label.value(), sel.getValue())))
                        .toArray(Predicate[]::new));
                matching.select(node.get("id"))
                        .where(anySelector)
                        .groupBy(node.get("id"))
                        .having(cb.equal(cb.count(label.key()), (long) selectors.size()));
                predicates.add(root.get("id").in(matching));
            }
            return cb.and(predicates.toArray(Predicate[]::new));
        };
    }

    private static String escapeLike(String text) {
        return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_");
    }
}
