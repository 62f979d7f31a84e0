package io.weir.controlplane.policy;

import jakarta.validation.ConstraintValidator;
import jakarta.validation.ConstraintValidatorContext;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Validates {@link ConsistentLimits} on a {@link PolicyRequest}. */
public class ConsistentLimitsValidator implements ConstraintValidator<ConsistentLimits, PolicyRequest> {

    @Override
    public boolean isValid(PolicyRequest request, ConstraintValidatorContext context) {
        if (request == null) {
            return true;
        }
        Map<String, Long> values = new HashMap<>();
        values.put("minIops", request.minIops());
        values.put("maxIops", request.maxIops());
        values.put("burstIops", request.burstIops());
        values.put("maxBytesPerSec", request.maxBytesPerSec());
        values.put("burstBytesPerSec", request.burstBytesPerSec());
        // A value that fails its own field constraint (not positive) is reported there only.
        List<QosLimits.Violation> violations = QosLimits.check(request.minIops(), request.maxIops(),
                        request.burstIops(), request.maxBytesPerSec(), request.burstBytesPerSec())
                .stream()
                .filter(v -> positiveOrNull(values.get(v.field())) && positiveOrNull(values.get(v.related())))
                .toList();
        if (violations.isEmpty()) {
            return true;
        }
        context.disableDefaultConstraintViolation();
        for (QosLimits.Violation v : violations) {
            // The message holds only digits and names: nothing a message interpolator would expand.
            context.buildConstraintViolationWithTemplate(v.message())
                    .addPropertyNode(v.field())
                    .addConstraintViolation();
        }
        return false;
    }

    private static boolean positiveOrNull(Long value) {
        return value == null || value > 0;
    }
}
