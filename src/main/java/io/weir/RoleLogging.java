package io.weir;

import java.util.Map;
import org.springframework.boot.logging.LoggingInitializationContext;
import org.springframework.boot.logging.LoggingSystem;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

/**
 * One log format for every role. The control plane logs through Spring Boot's logging system
 * (Logback, one line per event); the data node and the agent log through the JDK's
 * {@code System.Logger}, so that they embed without Spring (ArchitectureTest). Before such a role
 * starts, {@link #start} initialises the same logging system in its process: the JDK's logging
 * is bridged into it ({@code jul-to-slf4j}), and every role prints Spring Boot's console pattern,
 * tagged with the role ({@code [weir-datanode]}). The same settings apply as to the control plane,
 * from system properties or the environment: {@code LOGGING_STRUCTURED_FORMAT_CONSOLE=ecs} (or
 * {@code logstash}, {@code gelf}) prints one JSON object per line for log shippers, in every role.
 */
final class RoleLogging {

    private RoleLogging() {
    }

    /** Initialises logging for {@code role} (such as {@code datanode}) from the process's environment. */
    static void start(String role) {
        StandardEnvironment environment = new StandardEnvironment();
        environment.getPropertySources().addLast(new MapPropertySource("weir-role",
                Map.of("spring.application.name", "weir-" + role)));
        LoggingSystem system = LoggingSystem.get(RoleLogging.class.getClassLoader());
        system.beforeInitialize();
        system.initialize(new LoggingInitializationContext(environment), null, null);
    }
}
