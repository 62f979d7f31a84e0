package io.weir.controlplane.web;

import jakarta.validation.Constraint;
import jakarta.validation.Payload;
import jakarta.validation.ReportAsSingleViolation;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Size;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * A resource name: 1 to 63 characters of {@code [a-z0-9-]}, starting and ending with a letter or
 * digit (a DNS label, so names can appear in host names, export names and metric labels).
 */
@Documented
@Constraint(validatedBy = {})
@NotBlank
@Size(max = 63)
@Pattern(regexp = ResourceName.PATTERN)
@ReportAsSingleViolation
@Target({ElementType.FIELD, ElementType.PARAMETER, ElementType.RECORD_COMPONENT, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
public @interface ResourceName {

    String PATTERN = "^[a-z0-9]([a-z0-9-]*[a-z0-9])?$";

    String message() default "must be 1-63 characters of a-z, 0-9 and '-', starting and ending with a letter or digit";

    Class<?>[] groups() default {};

    Class<? extends Payload>[] payload() default {};
}
