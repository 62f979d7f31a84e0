package io.weir.demo;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/** The few file operations the demo needs. */
final class DemoFiles {

    private DemoFiles() {
    }

    /** Writes a secret readable by this user only (mode 0600). */
    static Path writeSecret(Path file, String secret) {
        try {
            Files.createDirectories(file.getParent());
            Files.deleteIfExists(file);
            Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            return Files.writeString(file, secret);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }

    /**
     * {@code n} distinct TCP ports free on {@code bindAddress} now (another process may take one
     * before the node does): each is held until all are picked.
     */
    static List<Integer> freePorts(String bindAddress, int n) {
        List<java.net.ServerSocket> held = new java.util.ArrayList<>();
        try {
            List<Integer> ports = new java.util.ArrayList<>();
            for (int i = 0; i < n; i++) {
                java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName(bindAddress));
                held.add(s);
                ports.add(s.getLocalPort());
            }
            return ports;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot find a free port on " + bindAddress, e);
        } finally {
            for (java.net.ServerSocket s : held) {
                try {
                    s.close();
                } catch (IOException ignored) {
                    // a port just picked: nothing to do
                }
            }
        }
    }

    /** Removes {@code dir} and everything under it; what cannot be removed is reported, not thrown. */
    static void deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.delete(p);
                } catch (IOException e) {
                    System.err.println("weir demo: could not remove " + p + ": " + e.getMessage());
                }
            });
        } catch (IOException | UncheckedIOException e) {
            System.err.println("weir demo: could not remove " + dir + ": " + e.getMessage());
        }
    }
}
