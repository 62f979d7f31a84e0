package io.weir.controlplane.database;

import com.zaxxer.hikari.HikariDataSource;
import java.time.Duration;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * The statement timeout of every pooled connection ({@code weir.database.statement-timeout},
 * default 30 s): no statement may hold a connection, and a backend's memory, without limit; one
 * cancelled by it answers 503 like any transient database failure. Read as a Spring duration
 * ({@code 30s}, {@code 2m}, {@code PT30S}) and set in milliseconds, which PostgreSQL reads whatever
 * the unit it was given in: handed over as text, {@code 2m} and {@code PT30S} (units PostgreSQL
 * does not know) failed every connection, and the service did not start.
 */
@Configuration(proxyBeanMethods = false)
class StatementTimeout {

    static final String PROPERTY = "weir.database.statement-timeout";

    /** The SQL that sets {@code timeout} on a connection. */
    static String initSql(Duration timeout) {
        if (timeout.isNegative()) {
            throw new IllegalArgumentException(PROPERTY + " must not be negative: " + timeout);
        }
        return "SET statement_timeout = " + timeout.toMillis();
    }

    /** Sets the timeout on the application's pool, the embedded server's or one configured by spring.datasource. */
    @Bean
    static BeanPostProcessor statementTimeoutOnThePool(Environment environment) {
        String sql = initSql(Binder.get(environment).bind(PROPERTY, Duration.class).orElse(Duration.ofSeconds(30)));
        return new BeanPostProcessor() {
            @Override
            public Object postProcessBeforeInitialization(Object bean, String beanName) {
                if (bean instanceof HikariDataSource pool) {
                    pool.setConnectionInitSql(sql);
                }
                return bean;
            }
        };
    }
}
