package io.weir.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How the demo starts its data nodes: the same Java, the same jar or class path as its own JVM. */
class DataNodeProcessTest {

    @TempDir
    Path work;

    /**
     * {@code java -jar "/opt/my apps/weir.jar" demo}: the JVM's command names the jar and its
     * arguments joined by spaces, so the jar's path is taken from the class path, which is the jar
     * alone. Cut at the first space, it was {@code /opt/my}, and the nodes were started with the
     * Spring Boot jar as a plain class path, where {@code io.weir.Main} is not found.
     */
    @Test
    void aDemoRunFromAJarWhosePathHasASpaceStartsItsNodesFromThatJar() throws Exception {
        Path jar = springBootJar(work.resolve("my apps").resolve("weir.jar"));
        List<String> command = DataNodeProcess.javaCommand("384m", jar + " demo --server.port=0", jar.toString());
        assertThat(command).containsSubsequence("-jar", jar.toString());
        assertThat(command).doesNotContain("io.weir.Main");
    }

    @Test
    void aDemoRunFromClassesStartsItsNodesOnTheSameClassPath() {
        List<String> command = DataNodeProcess.javaCommand("384m", "io.weir.Main demo", "/a/classes" + java.io.File.pathSeparator
                + "/a/lib/x.jar");
        assertThat(command).containsSubsequence("-cp", "/a/classes" + java.io.File.pathSeparator + "/a/lib/x.jar", "io.weir.Main");
    }

    private static Path springBootJar(Path file) throws Exception {
        Files.createDirectories(file.getParent());
        Manifest m = new Manifest();
        m.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        m.getMainAttributes().putValue("Spring-Boot-Version", "4.0.7");
        try (OutputStream out = Files.newOutputStream(file); JarOutputStream j = new JarOutputStream(out, m)) {
            j.flush();
        }
        return file;
    }
}
