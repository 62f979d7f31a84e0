# Weir: one image, several roles (control plane by default; `datanode`, `demo`).
# Build the jar first with `mvn -B package -DskipTests`, then `docker build -t weir .`.
FROM eclipse-temurin:17-jre
RUN useradd --system --home-dir /var/lib/weir --create-home weir
WORKDIR /var/lib/weir
COPY target/weir-*[0-9T].jar /opt/weir/weir.jar
USER weir
# The embedded PostgreSQL (used only when SPRING_DATASOURCE_URL is unset) keeps its data here.
VOLUME /var/lib/weir/data
EXPOSE 8080
ENTRYPOINT ["java", "-XX:MaxRAMPercentage=75", "-jar", "/opt/weir/weir.jar"]
