package io.weir.controlplane.database;

import com.zaxxer.hikari.HikariDataSource;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.jdbc.DataSourceBuilder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Starts the embedded PostgreSQL server and points the application's pool at it, unless
 * {@code spring.datasource.url} (or {@code SPRING_DATASOURCE_URL}) names a server to use instead.
 */
@Configuration(proxyBeanMethods = false)
@Conditional(EmbeddedDatabaseConfiguration.NoDatasourceUrl.class)
class EmbeddedDatabaseConfiguration {

    private static final Logger log = LoggerFactory.getLogger(EmbeddedDatabaseConfiguration.class);

    @Bean(destroyMethod = "close")
    EmbeddedPostgresServer embeddedPostgresServer(EmbeddedDatabaseProperties properties) {
        log.info("No spring.datasource.url configured: starting embedded PostgreSQL in {}",
                properties.dataDir().toAbsolutePath());
        EmbeddedPostgresServer server = EmbeddedPostgresServer.start(properties.dataDir(), properties.port());
        log.info("Embedded PostgreSQL listening on {}", server.jdbcUrl());
        return server;
    }

    @Bean
    @ConfigurationProperties("spring.datasource.hikari")
    HikariDataSource dataSource(EmbeddedPostgresServer server) {
        return DataSourceBuilder.create()
                .type(HikariDataSource.class)
                .driverClassName("org.postgresql.Driver")
                .url(server.jdbcUrl())
                .username(EmbeddedPostgresServer.USER)
                .password(server.password())
                .build();
    }

    static final class NoDatasourceUrl implements Condition {
        @Override
        public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
            String url = context.getEnvironment().getProperty("spring.datasource.url");
            return url == null || url.isBlank();
        }
    }
}
