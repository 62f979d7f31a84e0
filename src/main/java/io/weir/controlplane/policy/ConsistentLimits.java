package io.weir.controlplane.policy;

import jakarta.validation.Constraint;
import jakarta.validation.Payload;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Class-level check that a policy's reservation, limits and bursts obey the rules of
 * {@link io.weir.protocol.QosSettings}. Each
 * broken rule is reported against its own field, so that a client sees every problem at once,
 * beside the field-level errors.
 */
@Documented
@Constraint(validatedBy = ConsistentLimitsValidator.class)
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
public @interface ConsistentLimits {

    String message() default "limits are inconsistent";

    Class<?>[] groups() default {};

    Class<? extends Payload>[] payload() default {};
}
