package io.weir.controlplane.policy;

import io.weir.protocol.QosSettings;
import jakarta.validation.ConstraintValidator;
import jakarta.validation.ConstraintValidatorContext;
import java.util.List;

/**
 * Validates {@link ConsistentLimits} on a {@link PolicyRequest} by the rules between fields of
 * {@link io.weir.protocol.CapacityQos#violations()} (which include those of {@link QosSettings}
 * at every capacity), the contract the data nodes' scheduler checks too. A value
 * that fails its own field constraint (not positive) is reported there only.
 */
public class ConsistentLimitsValidator implements ConstraintValidator<ConsistentLimits, PolicyRequest> {

    @Override
    public boolean isValid(PolicyRequest request, ConstraintValidatorContext context) {
        if (request == null) {
            return true;
        }
        // Rules on one field (positivity, the weight) are the field constraints' to report.
        List<QosSettings.Violation> violations = request.terms().violations().stream()
                .filter(v -> v.related() != null).toList();
        if (violations.isEmpty()) {
            return true;
        }
        context.disableDefaultConstraintViolation();
        for (QosSettings.Violation v : violations) {
            // The message holds only digits and names: nothing a message interpolator would expand.
            context.buildConstraintViolationWithTemplate(v.message())
                    .addPropertyNode(v.field())
                    .addConstraintViolation();
        }
        return false;
    }
}
