package io.weir.controlplane.web;

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

/** A proportional-share weight or CPU share: an integer from 1 to 10000 (default 100). */
@Documented
@Constraint(validatedBy = {})
@Min(Weight.MIN)
@Max(Weight.MAX)
@ReportAsSingleViolation
@Target({ElementType.FIELD, ElementType.PARAMETER, ElementType.RECORD_COMPONENT, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
public @interface Weight {

    int MIN = 1;
    int MAX = 10000;
    int DEFAULT = 100;

    String message() default "must be an integer from 1 to 10000";

    Class<?>[] groups() default {};

    Class<? extends Payload>[] payload() default {};
}
