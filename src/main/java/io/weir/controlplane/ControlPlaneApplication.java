package io.weir.controlplane;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/**
 * The Weir control plane: the REST API through which administrators configure tenants,
 * volumes and QoS policies, and the channel that pushes those settings to data-node agents.
 *
 * <p>Started by {@code java -jar weir.jar} (or {@code mvn spring-boot:run}) through
 * {@link io.weir.Main}.
 */
@SpringBootApplication
@ConfigurationPropertiesScan
public class ControlPlaneApplication {

    public static void main(String[] args) {
        SpringApplication.run(ControlPlaneApplication.class, args);
    }
}
