package io.weir.controlplane.security;

import java.beans.PropertyEditorSupport;
import org.springframework.web.bind.WebDataBinder;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.InitBinder;

/**
 * Reads a {@link Role} query parameter ({@code ?role=tenant-admin}) by its exact wire name, as
 * bodies do. A converter alone is not enough: when it refuses {@code ADMIN}, Spring's data
 * binder falls back to {@code Enum.valueOf} on the constant name and would accept it. An editor
 * is consulted first and its refusal stands (400 naming the parameter).
 */
@ControllerAdvice
class RoleParameters {

    @InitBinder
    void exactRoles(WebDataBinder binder) {
        binder.registerCustomEditor(Role.class, new PropertyEditorSupport() {
            @Override
            public void setAsText(String text) {
                setValue(Role.fromWire(text));
            }
        });
    }
}
