# Weir: one image for every role, the first argument:
#   controlplane (the default)   the REST control plane        docker run weir
#   datanode                     an NBD data node               docker run weir datanode --control-plane URL --token-file F ...
#   agent                        the agent on its own           docker run weir agent ...
#   demo                         a whole local cluster          docker run -p 127.0.0.1:8080:8080 -p 127.0.0.1:10809-10810:10809-10810 weir demo --weir.demo.bind-address=0.0.0.0
# Options after the role go to the role (`docker run weir datanode --help`).
#
# Build it from the jar that `mvn package` produces; nothing else is needed:
#   mvn -B package -DskipTests && docker build -t weir .
#
# The Spring Boot jar is extracted into its layers (dependencies, loader, snapshot dependencies,
# application), each its own image layer, so a code change rebuilds only the small last one.

FROM eclipse-temurin:17-jre AS layers
WORKDIR /build
COPY target/weir-*.jar /build/
RUN set -eu; \
    jar=$(ls /build/weir-*.jar | grep -v -- '-agent\.jar$' | head -n 1); \
    java -Djarmode=tools -jar "$jar" extract --layers --launcher --destination /build/extracted

FROM eclipse-temurin:17-jre
# A fixed, non-root UID and GID (not 1000, which base images hand out): Kubernetes'
# runAsNonRoot can check it, and volumes can be prepared for it.
ARG WEIR_UID=10001
RUN groupadd --system --gid "${WEIR_UID}" weir \
 && useradd --system --uid "${WEIR_UID}" --gid weir --home-dir /var/lib/weir --no-create-home \
            --shell /usr/sbin/nologin weir \
 && mkdir -p /var/lib/weir/data /var/lib/weir/pki /var/lib/weir/pki-public \
 && chown -R weir:weir /var/lib/weir
WORKDIR /opt/weir
COPY --from=layers /build/extracted/dependencies/ ./
COPY --from=layers /build/extracted/spring-boot-loader/ ./
COPY --from=layers /build/extracted/snapshot-dependencies/ ./
COPY --from=layers /build/extracted/application/ ./
USER 10001:10001
# /var/lib/weir/data holds every role's files (WEIR_DATA_DIR: the control plane's weir.data-dir, a
# data node's --data-dir): the embedded PostgreSQL (used only when no SPRING_DATASOURCE_URL is set)
# and the generated admin token, a data node's volumes and cached config, or an agent's cached config.
WORKDIR /var/lib/weir
ENV WEIR_DATA_DIR=/var/lib/weir/data
VOLUME /var/lib/weir/data
# 8080: control plane HTTP (REST, Actuator); 10809: a data node's NBD (the demo's second: 10810).
EXPOSE 8080 10809 10810
# The heap follows the container's memory limit: 75% of it (the rest is for metaspace, thread
# stacks, direct buffers). In JAVA_TOOL_OPTIONS, not on the command line, which would win over
# anything set there: a JAVA_TOOL_OPTIONS of your own replaces it (-XX:MaxRAMPercentage=60, or -Xmx).
ENV JAVA_TOOL_OPTIONS="-XX:MaxRAMPercentage=75"
ENTRYPOINT ["java", "-XX:+ExitOnOutOfMemoryError", "-cp", "/opt/weir", \
            "org.springframework.boot.loader.launch.JarLauncher"]
CMD ["controlplane"]
# Readiness, without curl: a JDK-only class of the jar. It finds the role in the main process's
# command line and checks /actuator/health/readiness (control plane, demo) or the NBD greeting (data node).
HEALTHCHECK --interval=10s --timeout=5s --start-period=90s --retries=3 \
  CMD ["java", "-Xmx16m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", "/opt/weir/BOOT-INF/classes", \
       "io.weir.HealthProbe"]
