package io.weir.controlplane.taskshare;

import io.weir.controlplane.web.FieldError;
import io.weir.controlplane.web.RequestValidationException;
import jakarta.validation.Validator;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.springframework.stereotype.Component;

/**
 * Validates a {@link TaskSharesRequest}: the field constraints, and the rules that span fields
 * (the {@code foreground} task is present, names are unique, {@code t1 < t2}). Every problem is
 * reported at once, each under its JSON path such as {@code tasks[2].dynamic.t2}.
 */
@Component
class TaskShareValidation {

    /** The task that processes client IO; every set must give it a share. */
    static final String FOREGROUND = "foreground";

    private final Validator validator;

    TaskShareValidation(Validator validator) {
        this.validator = validator;
    }

    void check(TaskSharesRequest request) {
        List<FieldError> errors = new ArrayList<>();
        validator.validate(request).forEach(v -> errors.add(FieldError.of(v)));
        List<TaskShareRequest> tasks = request.tasks();
        if (tasks != null && !tasks.isEmpty()) {
            Set<String> seen = new HashSet<>();
            boolean foreground = false;
            for (int i = 0; i < tasks.size(); i++) {
                TaskShareRequest task = tasks.get(i);
                String path = "tasks[" + i + "]";
                if (task == null) {
                    errors.add(new FieldError(path, "must not be null"));
                    continue;
                }
                if (task.name() != null) {
                    foreground |= FOREGROUND.equals(task.name());
                    if (!seen.add(task.name())) {
                        errors.add(new FieldError(path + ".name", "duplicate task name '" + task.name() + "'"));
                    }
                }
                DynamicShareRequest dynamic = task.dynamic();
                if (dynamic != null && dynamic.t1() != null && dynamic.t2() != null && !(dynamic.t1() < dynamic.t2())) {
                    errors.add(new FieldError(path + ".dynamic.t2", "must be greater than t1"));
                }
            }
            if (!foreground) {
                errors.add(new FieldError("tasks", "must include the '" + FOREGROUND + "' task"));
            }
        }
        if (!errors.isEmpty()) {
            errors.sort(Comparator.comparing(FieldError::field).thenComparing(FieldError::message));
            throw new RequestValidationException(errors);
        }
    }
}
