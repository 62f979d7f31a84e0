package io.weir.demo;

import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.web.client.RestClient;

/** The beans the demo adds to the control plane: only {@link DemoCluster}. */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(DemoProperties.class)
class DemoConfiguration {

    @Bean
    DemoCluster demoCluster(DemoProperties properties, Environment environment) {
        return new DemoCluster(properties, environment, RestClient.builder());
    }
}
