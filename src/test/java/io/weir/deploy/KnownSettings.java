package io.weir.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.Main;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.Field;
import java.lang.reflect.Parameter;
import java.lang.reflect.RecordComponent;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.ConfigurationPropertyState;
import org.springframework.context.annotation.ClassPathScanningCandidateComponentProvider;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;
import org.yaml.snakeyaml.Yaml;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The settings Weir really reads, collected from the code, so that deployment files (compose,
 * Helm) can be checked against them instead of against a list kept by hand:
 * <ul>
 *   <li>the control plane: every property of Spring Boot's configuration metadata on the
 *       classpath ({@code META-INF/spring-configuration-metadata.json} of each Boot jar), every key
 *       of {@code application.yml}, every {@code @ConfigurationProperties} record of
 *       {@code io.weir} (its components, recursively), every {@code @Value} placeholder in
 *       {@code io.weir}, and the environment variables {@code application.yml} names in
 *       placeholders ({@code ${WEIR_BOOTSTRAP_TOKEN:}});</li>
 *   <li>the other roles: the options their {@code --help} lists ({@code java io.weir.Main ROLE
 *       --help}, in a forked JVM), each also read from {@code WEIR_<OPTION>}.</li>
 * </ul>
 * An environment variable is matched to a property the way Spring Boot binds it, by asking a
 * {@link SystemEnvironmentPropertySource} holding that variable for the property.
 */
final class KnownSettings {

    /** Environment variables the JVM, not the application, reads. */
    static final Set<String> JVM_VARIABLES = Set.of("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS");

    /**
     * The data node's options as agreed while its command was being built (issue 11), used only
     * when this build's {@code io.weir.Main} does not know the role yet; once it does, its
     * {@code --help} is the source.
     */
    private static final Map<String, List<String>> AGREED_OPTIONS = Map.of(
            "datanode", List.of("control-plane", "token", "token-file", "data-dir", "listen", "workers"));

    private static final Pattern PLACEHOLDER = Pattern.compile("\\$\\{([^:}]+)");
    private static final Pattern OPTION = Pattern.compile("(?<![\\w-])--([a-z][a-z0-9-]*)");

    private final Set<ConfigurationPropertyName> properties = new TreeSet<>();
    private final Set<ConfigurationPropertyName> maps = new TreeSet<>();
    private final Set<String> environmentNames = new TreeSet<>();
    private final Map<String, Set<String>> roleOptions = new java.util.HashMap<>();

    private KnownSettings() {
    }

    /** Collects the control plane's settings (roles' options are read on demand). */
    static KnownSettings collect() {
        KnownSettings known = new KnownSettings();
        try {
            known.readBootMetadata();
            known.readApplicationYaml();
            known.readConfigurationPropertiesAndValues();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return known;
    }

    /** The control plane's property names, for messages and sanity checks. */
    Set<ConfigurationPropertyName> properties() {
        return properties;
    }

    /**
     * Whether the control plane reads {@code variable}: a placeholder of {@code application.yml},
     * or an environment variable Spring Boot binds to one of its properties.
     */
    boolean controlPlaneReads(String variable) {
        if (JVM_VARIABLES.contains(variable) || environmentNames.contains(variable)) {
            return true;
        }
        ConfigurationPropertySource source = environmentSource(variable);
        for (ConfigurationPropertyName name : properties) {
            if (source.getConfigurationProperty(name) != null) {
                return true;
            }
        }
        for (ConfigurationPropertyName map : maps) {
            if (source.containsDescendantOf(map) == ConfigurationPropertyState.PRESENT) {
                return true;
            }
        }
        return false;
    }

    /** Whether {@code key} (a dotted name of an application.yaml) is a property of the control plane. */
    boolean controlPlaneHasProperty(String key) {
        ConfigurationPropertyName name = ConfigurationPropertyName.of(key);
        return properties.contains(name) || maps.stream().anyMatch(map -> map.isAncestorOf(name));
    }

    /** Whether role {@code role} reads {@code variable}: WEIR_FOO_BAR for its option --foo-bar. */
    boolean roleReads(String role, String variable) {
        if (JVM_VARIABLES.contains(variable)) {
            return true;
        }
        if (!variable.startsWith("WEIR_")) {
            return false;
        }
        String option = variable.substring("WEIR_".length()).toLowerCase(Locale.ROOT).replace('_', '-');
        return options(role).contains(option);
    }

    /** The options of {@code role}, without their dashes. */
    Set<String> options(String role) {
        return roleOptions.computeIfAbsent(role, KnownSettings::readRoleOptions);
    }

    private static ConfigurationPropertySource environmentSource(String variable) {
        // Named as Spring's own, so that Boot maps it the way it maps the real environment.
        SystemEnvironmentPropertySource environment = new SystemEnvironmentPropertySource(
                StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, Map.of(variable, "value"));
        return ConfigurationPropertySources.from(environment).iterator().next();
    }

    private void readBootMetadata() throws IOException {
        JsonMapper json = JsonMapper.builder().build();
        PathMatchingResourcePatternResolver resolver = new PathMatchingResourcePatternResolver();
        List<Resource> files = new ArrayList<>();
        files.addAll(List.of(resolver.getResources("classpath*:META-INF/spring-configuration-metadata.json")));
        files.addAll(List.of(resolver.getResources("classpath*:META-INF/additional-spring-configuration-metadata.json")));
        for (Resource file : files) {
            try (InputStream in = file.getInputStream()) {
                JsonNode properties = json.readTree(in).path("properties");
                for (JsonNode property : properties) {
                    String name = property.path("name").asString();
                    if (!ConfigurationPropertyName.isValid(name)) {
                        continue;
                    }
                    add(name, property.path("type").asString(""));
                }
            }
        }
        assertThat(this.properties).as("Spring Boot's configuration metadata on the classpath")
                .contains(ConfigurationPropertyName.of("spring.datasource.url"));
    }

    private void readApplicationYaml() throws IOException {
        Path file = Path.of("src/main/resources/application.yml");
        String text = Files.readString(file, StandardCharsets.UTF_8);
        Map<String, Object> tree = new Yaml().load(text);
        flatten("", tree);
        Matcher placeholder = PLACEHOLDER.matcher(text);
        while (placeholder.find()) {
            String name = placeholder.group(1);
            if (name.equals(name.toUpperCase(Locale.ROOT))) {
                environmentNames.add(name);
            }
        }
    }

    @SuppressWarnings("unchecked")
    private void flatten(String prefix, Map<String, Object> tree) {
        for (Map.Entry<String, Object> entry : tree.entrySet()) {
            String key = prefix.isEmpty() ? entry.getKey() : prefix + "." + entry.getKey();
            if (entry.getValue() instanceof Map<?, ?> child && !key.endsWith(".properties")) {
                flatten(key, (Map<String, Object>) child);
            } else if (ConfigurationPropertyName.isValid(key)) {
                properties.add(ConfigurationPropertyName.of(key));
            }
        }
    }

    private void readConfigurationPropertiesAndValues() {
        ClassPathScanningCandidateComponentProvider everything = new ClassPathScanningCandidateComponentProvider(false) {
            @Override
            protected boolean isCandidateComponent(
                    org.springframework.beans.factory.annotation.AnnotatedBeanDefinition definition) {
                return true;
            }
        };
        // Main code only: the classes directory, not test-classes.
        everything.addIncludeFilter((reader, factory) -> !reader.getResource().getDescription().contains("test-classes"));
        for (BeanDefinition definition : everything.findCandidateComponents("io.weir")) {
            Class<?> type = load(definition.getBeanClassName());
            if (type == null) {
                continue;
            }
            ConfigurationProperties bound = type.getAnnotation(ConfigurationProperties.class);
            if (bound != null) {
                addComponents(prefixOf(bound), type);
            }
            for (var constructor : type.getDeclaredConstructors()) {
                for (Parameter parameter : constructor.getParameters()) {
                    addValuePlaceholder(parameter);
                }
            }
            for (Field field : type.getDeclaredFields()) {
                addValuePlaceholder(field);
            }
        }
    }

    private void addValuePlaceholder(AnnotatedElement element) {
        Value value = element.getAnnotation(Value.class);
        if (value != null) {
            Matcher placeholder = PLACEHOLDER.matcher(value.value());
            while (placeholder.find()) {
                if (ConfigurationPropertyName.isValid(placeholder.group(1))) {
                    properties.add(ConfigurationPropertyName.of(placeholder.group(1)));
                }
            }
        }
    }

    private static String prefixOf(ConfigurationProperties bound) {
        return bound.prefix().isEmpty() ? bound.value() : bound.prefix();
    }

    private void addComponents(String prefix, Class<?> type) {
        if (!type.isRecord()) {
            properties.add(ConfigurationPropertyName.of(prefix));
            return;
        }
        for (RecordComponent component : type.getRecordComponents()) {
            String name = prefix + "." + kebab(component.getName());
            Class<?> componentType = component.getType();
            if (componentType.isRecord() && componentType.getName().startsWith("io.weir.")) {
                addComponents(name, componentType);
            } else {
                add(name, componentType.getName());
            }
        }
    }

    private void add(String name, String type) {
        ConfigurationPropertyName property = ConfigurationPropertyName.of(name);
        properties.add(property);
        if (type.startsWith("java.util.Map")) {
            maps.add(property);
        }
    }

    private static String kebab(String camel) {
        return camel.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(Locale.ROOT);
    }

    private static Class<?> load(String name) {
        try {
            return Class.forName(name, false, KnownSettings.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            return null;
        }
    }

    /** Runs {@code java io.weir.Main ROLE --help} in a forked JVM and collects the options it lists. */
    private static Set<String> readRoleOptions(String role) {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        ProcessBuilder help = new ProcessBuilder(java.toString(), "-cp", System.getProperty("java.class.path"),
                Main.class.getName(), role, "--help").redirectErrorStream(true);
        String output;
        int exit;
        try {
            Process process = help.start();
            output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError(role + " --help did not end within 60 s");
            }
            exit = process.exitValue();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
        if (output.contains("unknown role") && AGREED_OPTIONS.containsKey(role)) {
            System.out.println("KnownSettings: this build's io.weir.Main has no '" + role
                    + "' role yet; checking against its agreed options " + AGREED_OPTIONS.get(role));
            return new TreeSet<>(AGREED_OPTIONS.get(role));
        }
        assertThat(exit).as("exit code of '%s --help':%n%s", role, output).isZero();
        Set<String> options = new TreeSet<>();
        Matcher option = OPTION.matcher(output);
        while (option.find()) {
            options.add(option.group(1));
        }
        assertThat(options).as("options listed by '%s --help':%n%s", role, output).isNotEmpty();
        return options;
    }

    /** Readable list of variables, for assertion messages. */
    static String list(Collection<String> names) {
        return String.join(", ", names);
    }
}
