package io.weir.controlplane.web;

import static org.assertj.core.api.Assertions.assertThat;

import jakarta.validation.Constraint;
import jakarta.validation.ConstraintValidator;
import jakarta.validation.ConstraintValidatorContext;
import jakarta.validation.Payload;
import jakarta.validation.Valid;
import jakarta.validation.Validation;
import jakarta.validation.Validator;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Positive;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Violation paths render as JSON paths, the way Spring MVC names the fields of a @Valid body. */
class FieldErrorPathTest {

    private final Validator validator = Validation.buildDefaultValidatorFactory().getValidator();

    @Target(ElementType.TYPE)
    @Retention(RetentionPolicy.RUNTIME)
    @Constraint(validatedBy = NeverValid.Check.class)
    @interface NeverValid {
        String message() default "the body as a whole is wrong";

        Class<?>[] groups() default {};

        Class<? extends Payload>[] payload() default {};

        class Check implements ConstraintValidator<NeverValid, Object> {
            @Override
            public boolean isValid(Object value, ConstraintValidatorContext context) {
                return false;
            }
        }
    }

    record Dynamic(@Positive Double t2) {
    }

    record Task(@Valid Dynamic dynamic) {
    }

    record Limits(@Positive Long maxIops) {
    }

    record Body(List<@NotNull UUID> nodeIds, @Valid Limits overrides, @Valid List<Task> tasks) {
    }

    @NeverValid
    record Whole(String name) {
    }

    private List<String> paths(Object body) {
        return validator.validate(body).stream().map(FieldError::of).map(FieldError::field).sorted().toList();
    }

    @Test
    void containerElementsIndexesAndNestedPropertiesRenderAsJsonPaths() {
        Body body = new Body(Arrays.asList(UUID.randomUUID(), null), new Limits(-1L),
                List.of(new Task(null), new Task(new Dynamic(1.0)), new Task(new Dynamic(-1.0))));
        assertThat(paths(body)).containsExactly("nodeIds[1]", "overrides.maxIops", "tasks[2].dynamic.t2");
    }

    @Test
    void aClassLevelViolationBelongsToTheWholeDocument() {
        assertThat(paths(new Whole("x"))).containsExactly("$");
    }
}
