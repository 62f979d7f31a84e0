package io.weir.controlplane.usage;

import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;

/** Turns on the scheduled partition maintenance ({@link UsagePartitions#maintain()}). */
@Configuration(proxyBeanMethods = false)
@EnableScheduling
class UsageConfiguration {
}
