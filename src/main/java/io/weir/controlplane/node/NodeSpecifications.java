package io.weir.controlplane.node;

import jakarta.persistence.criteria.MapJoin;
import jakarta.persistence.criteria.Predicate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.springframework.data.jpa.domain.Specification;

/** The list filter of {@code GET /nodes}: name contains a fragment, and every label selector matches. */
final class NodeSpecifications {

    private NodeSpecifications() {
    }

    static Specification<DataNode> matching(String nameContains, List<Map.Entry<String, String>> labels) {
        return (root, query, cb) -> {
            List<Predicate> predicates = new ArrayList<>();
            if (nameContains != null && !nameContains.isEmpty()) {
                predicates.add(cb.like(root.get("name"), "%" + escapeLike(nameContains) + "%", '\\'));
            }
            // One inner join per selector; (node, key) is the label's primary key, so each join
            // matches at most one row per node and the result has no duplicates.
            for (Map.Entry<String, String> selector : labels) {
                MapJoin<DataNode, String, String> label = root.joinMap("labels");
                predicates.add(cb.equal(label.key(), selector.getKey()));
                predicates.add(cb.equal(label.value(), selector.getValue()));
            }
            return cb.and(predicates.toArray(Predicate[]::new));
        };
    }

    private static String escapeLike(String text) {
        return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_");
    }
}
