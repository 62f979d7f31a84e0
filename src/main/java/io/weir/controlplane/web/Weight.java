package io.weir.controlplane.web;

import io.weir.protocol.QosSettings;
import jakarta.validation.Constraint;
import jakarta.validation.Payload;
import jakarta.validation.ReportAsSingleViolation;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * A proportional-share weight or CPU share: an integer from {@value #MIN} to {@value #MAX}
 * (default {@value #DEFAULT}). The range is the QoS contract's ({@link QosSettings#MIN_WEIGHT},
 * {@link QosSettings#MAX_WEIGHT}), which the scheduler checks too.
 */
@Documented
@Constraint(validatedBy = {})
@Min(Weight.MIN)
@Max(Weight.MAX)
@ReportAsSingleViolation
@Target({ElementType.FIELD, ElementType.PARAMETER, ElementType.RECORD_COMPONENT, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
public @interface Weight {

    int MIN = QosSettings.MIN_WEIGHT;
    int MAX = QosSettings.MAX_WEIGHT;
    int DEFAULT = QosSettings.DEFAULT_WEIGHT;

    String message() default "must be an integer from " + MIN + " to " + MAX;

    Class<?>[] groups() default {};

    Class<? extends Payload>[] payload() default {};
}
