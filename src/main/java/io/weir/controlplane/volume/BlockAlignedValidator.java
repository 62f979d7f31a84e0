package io.weir.controlplane.volume;

import jakarta.validation.ConstraintValidator;
import jakarta.validation.ConstraintValidatorContext;

/** Validates {@link BlockAligned}. */
public class BlockAlignedValidator implements ConstraintValidator<BlockAligned, Long> {

    @Override
    public boolean isValid(Long value, ConstraintValidatorContext context) {
        return value == null || value % BlockAligned.BLOCK_SIZE == 0;
    }
}
