package io.weir;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The one executable's help: {@code --help} before or after the control plane's role prints the
 * roles and starts nothing. It started a control plane (an embedded PostgreSQL in {@code ./data},
 * an admin token, port 8080), Spring taking {@code --help} for a property.
 */
class MainTest {

    private static String help(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        boolean printed = Main.help(args, new PrintStream(out, true, StandardCharsets.UTF_8));
        return printed ? out.toString(StandardCharsets.UTF_8) : null;
    }

    @Test
    void helpListsTheRolesAndStartsNothing() {
        for (String[] args : new String[][] {{"--help"}, {"-h"}, {"help"}, {"controlplane", "--help"},
                {"controlplane", "-h"}, {"--server.port=9090", "--help"}}) {
            assertThat(help(args)).as(String.join(" ", args)).isNotNull()
                    .contains("controlplane").contains("datanode").contains("agent").contains("demo").contains("pki")
                    .contains("--property=value");
        }
    }

    @Test
    void otherArgumentsAreTheRolesOwn() {
        assertThat(help()).isNull();
        assertThat(help("--server.port=9090")).isNull();
        assertThat(help("datanode", "--help")).as("the data node's own help").isNull();
        assertThat(help("demo", "--help")).isNull();
    }
}
