package io.weir.controlplane.volume;

import jakarta.validation.Constraint;
import jakarta.validation.Payload;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * A size in bytes that is a whole number of {@value #BLOCK_SIZE}-byte blocks. NBD clients (the
 * Linux kernel client, qemu) address exports in blocks and round or refuse a size that is not
 * block-aligned. Null is valid (use {@code @NotNull} to require a value).
 */
@Documented
@Constraint(validatedBy = BlockAlignedValidator.class)
@Target({ElementType.FIELD, ElementType.PARAMETER, ElementType.RECORD_COMPONENT, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
public @interface BlockAligned {

    /** The block size sizes must be a multiple of. */
    int BLOCK_SIZE = 4096;

    String message() default "must be a multiple of 4096 bytes";

    Class<?>[] groups() default {};

    Class<? extends Payload>[] payload() default {};
}
